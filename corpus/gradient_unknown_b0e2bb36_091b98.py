# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=gradient-unknown-b0e2bb36 dedup=gradient-unknown-b0e2bb36:Tensor.__truediv__+Tensor.scatter_add+cond:torch.cos+cond:torch.tanh+cond:{0} symptom=gradient device=cpu issue=https://github.com/pytorch/pytorch/issues/153679
"""[Fuzzer][Eager/Compile Divergence] torch.compile (inductor, cpu) computes wrong gradients: grad of input x1: rmse vs fp64: compiled 0.119 > 3 x eager 9.56e-09 + 4.8e-07; max abs diff 0.119; first at [0]: eager=-

Found by fuzzcomp (seed 2027006399); bucket gradient-unknown-b0e2bb36.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same

torch.set_num_threads(1)  # a parallel sum adds in another order


def cond_true0(v9):
    v10 = torch.tanh(v9)
    v11 = v10 * 0.5
    return v11


def cond_false0(v12):
    v13 = torch.tanh(v12)
    v14 = torch.cos(v13)
    return v14


def fn(x1):
    v15 = torch.cond((x1 > -0.5).any(), cond_true0, cond_false0, (x1,))
    v17 = v15.scatter_add(0, (torch.arange(v15.shape[0], device=v15.device) // 2), x1.to(v15.dtype))
    return (v17,)


def inputs(fp64=False):
    def up(t):  # the fp64 reference runs on the same values in float64
        return t.double() if fp64 else t

    x1 = up(torch.tensor([1.880212], dtype=torch.float32)).requires_grad_()  # float32 (1,), strides (1,), requires grad
    return [x1]


def grads(f, xs):  # backward of sum(out * w) with fixed weights k/64
    outs = [o for o in f(*xs) if isinstance(o, torch.Tensor) and o.requires_grad]
    ws = [(torch.randint(-64, 65, o.shape, generator=torch.Generator().manual_seed(i)) / 64).to(o.dtype) for i, o in enumerate(outs)]
    torch.autograd.backward(outs, grad_tensors=ws)
    return [x.grad for x in xs if isinstance(x, torch.Tensor) and x.requires_grad]


compiled = torch.compile(fn)
ref, fp64, res = grads(fn, inputs()), grads(fn, inputs(fp64=True)), grads(compiled, inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print("BUG: compiled gradients differ from eager beyond the fp64 reference's error")
    raise SystemExit(1)
print("OK: compiled matches eager")
