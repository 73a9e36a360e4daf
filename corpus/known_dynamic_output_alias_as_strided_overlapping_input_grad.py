# fuzzcomp-corpus: status=open torch>=2.11 bucket=gradient-autograd-24f9fd1b dedup=known:dynamic-output-alias-as-strided-overlapping-input-grad symptom=gradient device=cpu issue=none
"""[Known] dynamic=True: an output that views an expanded (stride-0) input requiring grad is regenerated with as_strided, and the input's gradient is averaged over the overlap

Registry entry dynamic-output-alias-as-strided-overlapping-input-grad; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same


def fn(y):
    return y.expand(y.shape[0], y.shape[0])


def grad(f, dtype=torch.float32):
    y = torch.tensor([1.0], dtype=dtype).expand(2).requires_grad_()  # (2,), strides (0,): self-overlapping
    w = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=dtype)
    (f(y) * w).sum().backward()
    return y.grad


ref, fp64, res = grad(fn), grad(fn, torch.float64), grad(torch.compile(fn, dynamic=True))
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: y.grad differs: eager {ref.tolist()}, compiled {res.tolist()}")
    raise SystemExit(1)
print("OK: compiled gradient matches eager")
