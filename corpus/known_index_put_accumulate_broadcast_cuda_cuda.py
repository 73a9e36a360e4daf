# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-ff0c0944 dedup=known:index-put-accumulate-broadcast-cuda symptom=numeric device=cuda issue=none
"""[Known] CUDA: index_put(accumulate=True) of a 0-dim value at 5 repeated indices adds it 8 times

Registry entry index-put-accumulate-broadcast-cuda; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(g, x):
    return g.index_put_((torch.zeros(5, dtype=torch.long, device="cuda"),), x, accumulate=True)


def after(f):
    g = torch.full((3,), 0.5, device="cuda")  # float32 (3,), written in place
    f(g, torch.tensor(1.25, device="cuda"))  # a 0-dim value broadcast over 5 repeated indices
    return g


ref, res = after(fn), after(torch.compile(fn))
if not torch.equal(ref, res):  # exact: 0.5 + 5 * 1.25 is exactly representable
    print(f"BUG: index_put_(accumulate=True) at 5 repeated indices: compiled {res.tolist()}, eager {ref.tolist()}")
    raise SystemExit(1)
print("OK: compiled writes the input as eager does")
