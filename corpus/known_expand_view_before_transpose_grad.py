# fuzzcomp-corpus: status=open torch>=2.11 bucket=gradient-autograd-9fb5c0f8 dedup=known:expand-view-before-transpose-grad symptom=gradient device=cpu issue=none
"""[Known] A view taken before an in-place transpose_ of its base: compiled gradient is wrong

Registry entry expand-view-before-transpose-grad; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same


def fn(x):
    v = x * 2
    a = v.t()  # a view taken before the in-place transpose_ of its base
    v.t_()
    return a


def grad(f, dtype=torch.float32):
    x = torch.ones(3, 3, dtype=dtype, requires_grad=True)  # (3, 3), strides (3, 1)
    w = torch.arange(9, dtype=dtype).view(3, 3)  # not symmetric: a transposed gradient shows
    (f(x) * w).sum().backward()
    return x.grad


ref, fp64, res = grad(fn), grad(fn, torch.float64), grad(torch.compile(fn))
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: x.grad differs: eager row 0 {ref[0].tolist()}, compiled row 0 {res[0].tolist()}")
    raise SystemExit(1)
print("OK: compiled gradient matches eager")
