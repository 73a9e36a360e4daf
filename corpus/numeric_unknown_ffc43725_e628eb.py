# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=numeric-unknown-ffc43725 dedup=numeric-unknown-ffc43725:Tensor.index_add+Tensor.index_fill_+torch.median symptom=numeric device=cpu issue=https://github.com/pytorch/pytorch/issues/198094
"""[Fuzzer][Eager/Compile Divergence] torch.compile (inductor, cpu) returns wrong values: output[1]: 1 of 1 elements differ; first at [0]: eager=16 compiled=3

Found by fuzzcomp (seed 2027008485); bucket numeric-unknown-ffc43725.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same

torch.set_num_threads(1)  # a parallel sum adds in another order


def fn(x0):
    v0 = x0.index_add(0, (torch.arange(x0.shape[0], device=x0.device) // 2), x0.flip(0))
    x0.index_fill_(0, torch.arange(x0.shape[0], device=x0.device).flip(0), 3)
    v1 = torch.median(v0, 0, keepdim=False).values
    return (v1, v0)


def inputs():
    x0 = torch.tensor([8], dtype=torch.uint8)  # uint8 (1,), strides (1,)
    return [x0]


compiled = torch.compile(fn)
ref, res = fn(*inputs()), compiled(*inputs())
if not same(ref, res, equal_nan=True):
    print("BUG: compiled output differs from eager")
    raise SystemExit(1)
print("OK: compiled matches eager")
