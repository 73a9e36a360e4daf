# fuzzcomp-corpus: status=open torch>=2.11,<2.13 bucket=compile-crash-inductor-b2bd5c09 dedup=compile-crash-inductor-b2bd5c09:cond:mix+cond:torch.sin+torch.cond symptom=compile-crash device=cuda issue=https://github.com/pytorch/pytorch/issues/167070
"""[Fuzzer][Compile Crash] torch.compile (inductor, cuda) fails to compile: compiled raised InductorError: AssertionError: Unsupported inductor graph input type: <class 'sympy.core.relational.Stri

Found by fuzzcomp (seed 31000158); bucket compile-crash-inductor-b2bd5c09.

Exit 1 while the bug shows, 0 once it is fixed. Needs a CUDA device (exit 3 without).
"""
import traceback

import torch

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def cond_true0(v1, v2):
    v3 = torch.sin(v1)
    v4 = torch.sin(v3)
    return v4


def cond_false0(v5, v6):
    v7 = v5 * 0.5 + v6 * 0.5
    return v7


def fn(x0):
    v8 = torch.cond(x0.shape[0] > 8, cond_true0, cond_false0, (x0, x0))
    return (v8,)


def inputs():
    x0 = torch.tensor([1.880212, 0.83127946], dtype=torch.float32).to('cuda').requires_grad_()  # float32 (2,), strides (1,), requires grad
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
