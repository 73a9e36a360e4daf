# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-5146ba76 dedup=known:cpu-vectorized-remainder-inf-divisor symptom=numeric device=cpu issue=https://github.com/pytorch/pytorch/issues/198057
"""[Known] Inductor CPU: vectorized remainder / % computes a - floor(a / b) * b, so an infinite divisor gives NaN (eager: the dividend) once the tensor reaches the vector width

Registry entry cpu-vectorized-remainder-inf-divisor; upstream https://github.com/pytorch/pytorch/issues/198057.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same


def fn(x):
    return torch.remainder(x, float("inf"))


x = torch.arange(16, dtype=torch.float32) / 8 + 0.0625  # float32 (16,), all positive: x % inf == x
ref, fp64, res = fn(x), fn(x.double()), torch.compile(fn)(x)
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: remainder by inf: eager {ref[:3].tolist()} compiled {res[:3].tolist()} (first 3)")
    raise SystemExit(1)
print("OK: compiled matches eager")
