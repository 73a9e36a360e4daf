# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-1159c112 dedup=known:scatter-accumulate-fused-with-mutated-reader symptom=numeric device=cpu issue=none
"""[Known] x.index_add_(0, idx, src) with repeated indices, then a pointwise read of x (-x) fused into the same kernel as the scatter: the read sees x before the accumulation (CPU Inductor)

Registry entry scatter-accumulate-fused-with-mutated-reader; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same


def fn(x):
    y = x + 0
    s = y * 2
    y.index_add_(0, torch.tensor([0, 0]), s)  # both rows of s accumulate into row 0
    v6 = -y
    return torch.tril(s * v6), v6


x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])  # float32 (2, 2)
ref, fp64, res = fn(x), fn(x.double()), torch.compile(fn)(x)
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: compiled output differs from eager: -y eager={ref[1].tolist()} compiled={res[1].tolist()}")
    raise SystemExit(1)
print("OK: compiled matches eager")
