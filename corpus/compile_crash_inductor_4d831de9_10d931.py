# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=compile-crash-inductor-4d831de9 dedup=compile-crash-inductor-4d831de9:cond:mix+cond:torch.sin+torch.cond+torch.nn.functional.linear symptom=compile-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/188151
"""[Fuzzer][Compile Crash] torch.compile (inductor, cpu) fails to compile: compiled raised BackendCompilerFailed: RuntimeError: It seems one of cond's output stride is not a simple accumulative m

Found by fuzzcomp (seed 2027007752); bucket compile-crash-inductor-4d831de9.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch


def cond_true0(v2, v3):
    v4 = v2 * 0.5 + v3 * 0.5
    return v4


def cond_false0(v5, v6):
    v7 = torch.sin(v5)
    return v7


def fn(x0):
    v8 = torch.cond(x0.shape[1] > 9, cond_true0, cond_false0, (x0, x0))
    v9 = torch.nn.functional.linear(v8, torch.linspace(-0.5, 0.5, 17 * v8.shape[-1], dtype=v8.dtype, device=v8.device).reshape(17, v8.shape[-1]), torch.linspace(-1, 1, 17, dtype=v8.dtype, device=v8.device))
    return (v9,)


def inputs():
    x0 = torch.tensor([[[1.880212], [0.83127946]], [[-0.16246822], [1.6829908]]], dtype=torch.float32).requires_grad_()  # float32 (2, 2, 1), strides (2, 1, 1), requires grad
    return [x0]


def run(f, xs):
    out = f(*xs)
    outs = [o for o in out if isinstance(o, torch.Tensor) and o.requires_grad]
    torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])


compiled = torch.compile(fn, dynamic=True)
run(fn, inputs())  # eager is fine
try:
    run(compiled, inputs())
except Exception as e:
    traceback.print_exc()
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled matches eager")
