# fuzzcomp-corpus: status=open torch>=2.11 bucket=gradient-inductor-b3e61117 dedup=known:avgpool-ceil-overhang-grad symptom=gradient device=cpu issue=https://github.com/pytorch/pytorch/issues/198119
"""[Known] avg_pool1d(ceil_mode=True, count_include_pad=True) on a short input: Inductor's backward divides the overhanging window by 2

Registry entry avgpool-ceil-overhang-grad; upstream issue https://github.com/pytorch/pytorch/issues/198119.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F
from torch._dynamo.utils import same


def fn(x):
    return F.avg_pool1d(x, 2, 2, 0, ceil_mode=True, count_include_pad=True)  # the last window overhangs by 1


def grad(f, dtype=torch.float32):
    x = torch.arange(3, dtype=dtype).reshape(1, 1, 3).requires_grad_()  # (1, 1, 3)
    f(x).sum().backward()
    return x.grad


ref, fp64, res = grad(fn), grad(fn, torch.float64), grad(torch.compile(fn))
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: gradient of avg_pool1d(ceil_mode=True): compiled {res.flatten().tolist()}, eager {ref.flatten().tolist()}")
    raise SystemExit(1)
print("OK: compiled gradient matches eager")
