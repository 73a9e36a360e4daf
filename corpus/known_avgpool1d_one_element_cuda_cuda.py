# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-1387b61f dedup=known:avgpool1d-one-element-cuda symptom=numeric device=cuda issue=https://github.com/pytorch/pytorch/issues/143720 verified=no
"""[Known] CUDA: avg_pool1d (padding, ceil_mode) of a one-element input returns the element instead of its padded average

Registry entry avgpool1d-one-element-cuda; upstream issue https://github.com/pytorch/pytorch/issues/143720.

Exit 1 while the bug shows, 0 once it is fixed. verified=no: its first form (avg_pool1d of a
(1, 1) input tensor) passed on torch 2.11 (H200, 2026-12-05); the campaign's minimised program
pooled a matmul's float16 output under autocast, as this one does.
"""
import torch
import torch.nn.functional as F
from torch._dynamo.utils import same

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(x):
    with torch.autocast("cuda"):  # float16 matmul (a float64 input stays float64)
        y = x @ x.t()  # (1, 1): one channel, one element
    return F.avg_pool1d(y, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=True)


def inputs(dtype=torch.float32):
    return torch.tensor([[0.75]], dtype=dtype, device="cuda")


ref, fp64, res = fn(inputs()), fn(inputs(torch.float64)), torch.compile(fn)(inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: avg_pool1d of a one-element input: compiled {res.tolist()}, eager {ref.tolist()}")
    raise SystemExit(1)
print("OK: compiled matches eager")
