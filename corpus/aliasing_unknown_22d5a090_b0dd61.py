# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=aliasing-unknown-22d5a090 dedup=aliasing-unknown-22d5a090:Tensor.relu_+{0}.clone symptom=aliasing device=cpu issue=https://github.com/pytorch/pytorch/issues/197893
"""[Fuzzer][Eager/Compile Divergence] torch.compile (inductor, cpu) changes which inputs outputs alias: alias of output tensor 0: eager='fresh' compiled='shares storage with x0'

Found by fuzzcomp (seed 2027006139); bucket aliasing-unknown-22d5a090.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x0):
    x0[::2].relu_()
    v0 = x0.clone()
    return (v0,)


def inputs():
    x0 = torch.tensor([1.880212], dtype=torch.float32)  # float32 (1,), strides (1,)
    return [x0]


def shared(f, xs):  # for each output, which inputs it shares storage with
    ptr = lambda t: t.untyped_storage().data_ptr()  # noqa: E731
    return [[ptr(o) == ptr(x) for x in xs if isinstance(x, torch.Tensor)]
            for o in f(*xs) if isinstance(o, torch.Tensor)]


compiled = torch.compile(fn)
ref, res = shared(fn, inputs()), shared(compiled, inputs())
if ref != res:
    print(f"BUG: outputs share storage with inputs {res} compiled, {ref} in eager")
    raise SystemExit(1)
print("OK: compiled matches eager")
