# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-autograd-d259e7fb dedup=known:dynamic-offset-input-view-output symptom=numeric device=cpu issue=none
"""[Known] Dynamic shapes: an output that views an input written in place is regenerated with as_strided from the graph output's geometry: wrong storage offset or strides

Registry entry dynamic-offset-input-view-output; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same


def fn(x):
    x.add_(x)
    return x.reshape(1, x.shape[0])


def inputs(dtype=torch.float32):
    base = torch.arange(8, dtype=dtype)
    return (base[3:],)  # (5,), strides (1,), storage offset 3


ref, fp64, res = fn(*inputs()), fn(*inputs(torch.float64)), torch.compile(fn, dynamic=True)(*inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: compiled output differs from eager: eager={ref.tolist()} compiled={res.tolist()}")
    raise SystemExit(1)
print("OK: compiled matches eager")
