# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-neg-zero-sign-cuda dedup=known:neg-zero-sign-cuda symptom=numeric device=cuda issue=https://github.com/pytorch/pytorch/issues/185696
"""[Known] CUDA: neg(+0.0) compiled gives +0.0 (eager -0.0)

Registry entry neg-zero-sign-cuda; upstream issue https://github.com/pytorch/pytorch/issues/185696.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(x):
    return torch.neg(x)


x = torch.zeros(16, device="cuda")  # float32 (16,), all +0.0
ref, res = fn(x), torch.compile(fn)(x)
if not torch.equal(torch.signbit(ref), torch.signbit(res)):
    print(f"BUG: neg(+0.0) compiled is {res[0].item()} (eager {ref[0].item()}): the sign of zero is lost")
    raise SystemExit(1)
print("OK: compiled keeps the sign of zero")
