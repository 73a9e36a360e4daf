# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=numeric-unknown-8abe30e5 dedup=numeric-unknown-8abe30e5:Tensor.index_copy+Tensor.relu_+container:getitem+loop:carry_index+loop:init+torch.cos symptom=numeric device=cpu issue=https://github.com/pytorch/pytorch/issues/198131
"""[Fuzzer][Eager/Compile Divergence] torch.compile (inductor, cpu) returns wrong values: output[0]: rmse vs fp64: compiled 0.581 > 3 x eager 0 + 4.8e-07; max abs diff 0.822; first at [1, 0]: eager=0.6267537474

Found by fuzzcomp (seed 2026006372); bucket numeric-unknown-8abe30e5.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same

torch.set_num_threads(1)  # a parallel sum adds in another order


def fn(x1):
    v0 = x1['k0']
    v4 = v0.clone()
    v0.select(0, -1).relu_()
    v14 = v4.index_copy(1, torch.arange(v4.shape[1]).flip(0), v0.to(v4.dtype))
    return (v14,)


def inputs(fp64=False):
    def up(t):  # the fp64 reference runs on the same values in float64
        return t.double() if fp64 else t

    x1 = {'k0': up(torch.tensor([[-0.8824783, -0.90522516], [1.4483719, 0.62675375]], dtype=torch.float32)), 'k1': up(torch.tensor([[1.1336727, 0.2851281], [-1.5583394, -1.2302078]], dtype=torch.float32)), 'k2': up(torch.tensor([[-1.0148957, 1.3566866], [-0.62514114, -1.668466]], dtype=torch.float32))}  # float32 (2, 2), strides (2, 1)
    return [x1]


compiled = torch.compile(fn)
ref, fp64, res = fn(*inputs()), fn(*inputs(fp64=True)), compiled(*inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print("BUG: compiled output differs from eager beyond the fp64 reference's error")
    raise SystemExit(1)
print("OK: compiled matches eager")
