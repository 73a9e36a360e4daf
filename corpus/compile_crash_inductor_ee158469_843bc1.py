# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=compile-crash-inductor-ee158469 dedup=compile-crash-inductor-ee158469:Tensor.__gt__+Tensor.mul_[scalar]+Tensor.view[dtype]+torch.sum symptom=compile-crash device=cpu issue=none
"""[Fuzzer][Compile Crash] torch.compile (inductor, cpu) fails to compile: compiled raised InductorError: CppCompileError: C++ compile error

Found by fuzzcomp (seed 2027006325); bucket compile-crash-inductor-ee158469.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch


def fn(x0):
    v1 = x0 > x0
    v3 = v1.view(torch.uint8)
    v3.transpose(-1, -2).mul_(2)
    v4 = v1.sum(0, keepdim=False)
    return (v4,)


def inputs():
    x0 = (torch.rand((8, 8), generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 4 - 2).float().requires_grad_()  # float32 (8, 8), strides (8, 1), requires grad
    return [x0]


def run(f, xs):
    out = f(*xs)
    outs = [o for o in out if isinstance(o, torch.Tensor) and o.requires_grad]
    torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])


compiled = torch.compile(fn)
run(fn, inputs())  # eager is fine
try:
    run(compiled, inputs())
except Exception as e:
    traceback.print_exc()
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled matches eager")
