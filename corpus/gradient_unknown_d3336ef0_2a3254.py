# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=gradient-unknown-d3336ef0 dedup=gradient-unknown-d3336ef0:Tensor.add_+torch.amin+torch.nn.functional.linear symptom=gradient device=cpu issue=https://github.com/pytorch/pytorch/issues/186799
"""[Fuzzer][Eager/Compile Divergence] torch.compile (inductor, cpu) computes wrong gradients: grad of input x2: compiled is non-finite at 1 elements where eager and fp64 are finite; first at [0, 0]: eager=0.1328125

Found by fuzzcomp (seed 2026006090); bucket gradient-unknown-d3336ef0.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same

torch.set_num_threads(1)  # a parallel sum adds in another order


def fn(x2):
    v0 = torch.nn.functional.linear(x2, torch.linspace(-0.5, 0.5, 8 * x2.shape[-1], dtype=x2.dtype).reshape(8, x2.shape[-1]), torch.linspace(-1, 1, 8, dtype=x2.dtype))
    v0.add_(x2)
    v1 = v0.amin(1, keepdim=False)
    return (v1,)


def inputs(fp64=False):
    def up(t):  # the fp64 reference runs on the same values in float64
        return t.double() if fp64 else t

    x2 = up(torch.tensor([[-0.945]], dtype=torch.bfloat16)).requires_grad_()  # bfloat16 (1, 1), strides (1, 1), requires grad
    return [x2]


def grads(f, xs):  # backward of sum(out * w) with fixed weights k/64
    outs = [o for o in f(*xs) if isinstance(o, torch.Tensor) and o.requires_grad]
    ws = [(torch.randint(-64, 65, o.shape, generator=torch.Generator().manual_seed(11576882125794 + i)) / 64).to(o.dtype) for i, o in enumerate(outs)]
    torch.autograd.backward(outs, grad_tensors=ws)
    return [x.grad for x in xs if isinstance(x, torch.Tensor) and x.requires_grad]


compiled = torch.compile(fn)
ref, fp64, res = grads(fn, inputs()), grads(fn, inputs(fp64=True)), grads(compiled, inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True, tol=0.312):
    print("BUG: compiled gradients differ from eager beyond the fp64 reference's error")
    raise SystemExit(1)
print("OK: compiled matches eager")
