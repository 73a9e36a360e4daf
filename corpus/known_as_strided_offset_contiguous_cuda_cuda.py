# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-e9eb77b6 dedup=known:as-strided-offset-contiguous-cuda symptom=numeric device=cuda issue=https://github.com/pytorch/pytorch/issues/175325
"""[Known] CUDA, dynamic: as_strided(x.contiguous(), ..., x.storage_offset() + 1) of an offset view reads the wrong elements

Registry entry as-strided-offset-contiguous-cuda; upstream issue https://github.com/pytorch/pytorch/issues/175325.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(x):
    y = x.contiguous()  # a no-op: x is already contiguous, at storage offset 2
    return torch.as_strided(y, (3, 3), (1, 2), y.storage_offset() + 1)


def inputs(dtype=torch.float32):
    return torch.arange(16, dtype=dtype, device="cuda")[2:14]  # (12,), strides (1,), storage offset 2


ref, fp64, res = fn(inputs()), fn(inputs(torch.float64)), torch.compile(fn, dynamic=True)(inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: as_strided of an offset view: compiled {res.flatten().tolist()}, eager {ref.flatten().tolist()}")
    raise SystemExit(1)
print("OK: compiled matches eager")
