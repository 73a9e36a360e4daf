# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-synthetic-base-offset-alias-output-view dedup=known:synthetic-base-offset-alias-output-view symptom=numeric device=cpu issue=https://github.com/pytorch/pytorch/issues/198095
"""[Known] Two aliased inputs (a base and its offset view base[1:]), the base written in place, an output that views the offset alias: AOTAutograd regenerates the output from the synthetic base without the alias's storage offset (silently wrong values)

Registry entry synthetic-base-offset-alias-output-view; upstream https://github.com/pytorch/pytorch/issues/198095.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same

# backend aot_eager: the bug is AOTAutograd's (inductor fails on this program with another error first)


def fn(t0, ta):
    t0.add_(100)
    return ta[0]


def inputs(dtype=torch.float32):
    b = torch.arange(24, dtype=dtype).reshape(4, 6).clone()  # (4, 6), strides (6, 1), no ._base of its own
    return b, b[1:]  # ta is b's rows 1..3: storage offset 6


ref, fp64, res = fn(*inputs()), fn(*inputs(torch.float64)), torch.compile(fn, backend="aot_eager")(*inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: compiled output differs from eager: eager={ref.tolist()} compiled={res.tolist()}")
    raise SystemExit(1)
print("OK: compiled matches eager")
