# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-4c5ea6df dedup=known:scatter-then-inplace-read-copy-back-fused symptom=numeric device=cpu issue=https://github.com/pytorch/pytorch/issues/198270
"""[Known] x[idx] = v (index_put, index_add_, index_copy_) on an input, then an in-place update of x that reads x at other positions (x.add_(x.flip(0))): the copy-back is fused with the read

Registry entry scatter-then-inplace-read-copy-back-fused; upstream https://github.com/pytorch/pytorch/issues/198270.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same


def fn(g, m):
    g[torch.arange(2)] = m
    g.add_(g.flip(0))
    return g


def inputs(dtype=torch.float32):
    return torch.zeros(2, dtype=dtype), torch.ones(2, dtype=dtype)  # (2,) each


ref, fp64, res = fn(*inputs()), fn(*inputs(torch.float64)), torch.compile(fn)(*inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: compiled output differs from eager: eager={ref.tolist()} compiled={res.tolist()}")
    raise SystemExit(1)
print("OK: compiled matches eager")
