# fuzzcomp-corpus: status=open torch>=2.11,<2.13 bucket=numeric-inductor-33e5c201 dedup=known:copysign-negative-zero-cuda symptom=numeric device=cuda issue=https://github.com/pytorch/pytorch/issues/174172
"""[Known] CUDA: copysign(x, -0.0) compiled keeps every sign positive

Registry entry copysign-negative-zero-cuda; upstream https://github.com/pytorch/pytorch/issues/174172.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(x):
    return torch.copysign(x, -0.0)


x = torch.tensor([1.5, 2.0, float("inf"), 3e38], device="cuda")  # float32 (4,)
ref, res = fn(x), torch.compile(fn)(x)
if not torch.equal(ref, res):  # copysign is exact
    print(f"BUG: copysign(x, -0.0): eager {ref.tolist()} compiled {res.tolist()}")
    raise SystemExit(1)
print("OK: compiled matches eager")
