# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=mutation-unknown-4d12540c dedup=mutation-unknown-4d12540c:Tensor.masked_fill_+Tensor.unfold symptom=mutation device=cpu issue=https://github.com/pytorch/pytorch/issues/198102
"""[Fuzzer][Eager/Compile Divergence] torch.compile (inductor, cpu) leaves an input with wrong values: input x1 after call: rmse vs fp64: compiled 1.45 > 3 x eager 0 + 6.9e-07; max abs diff 1.88; first at [0]: eager=1.88021

Found by fuzzcomp (seed 1000137); bucket mutation-unknown-4d12540c.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same

torch.set_num_threads(1)  # a parallel sum adds in another order


def fn(x1):
    v0 = x1.unfold(0, 0, 3)
    v0.masked_fill_((torch.arange(v0.shape[-1], device=v0.device) % 3 == 1), 0.75)
    return (v0,)


def inputs(fp64=False):
    def up(t):  # the fp64 reference runs on the same values in float64
        return t.double() if fp64 else t

    x1 = up(torch.tensor([1.880212, 0.83127946], dtype=torch.float32))  # float32 (2,), strides (1,)
    return [x1]


compiled = torch.compile(fn)
xs, x64, ys = inputs(), inputs(fp64=True), inputs()
fn(*xs), fn(*x64), compiled(*ys)
if not same(xs, ys, fp64_ref=x64, equal_nan=True):
    print("BUG: an input holds other values after the compiled call than after eager")
    raise SystemExit(1)
print("OK: compiled matches eager")
