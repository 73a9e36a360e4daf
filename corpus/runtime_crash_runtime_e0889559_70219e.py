# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=runtime-crash-runtime-e0889559 dedup=runtime-crash-runtime-e0889559:Tensor.div_ symptom=runtime-crash device=cpu issue=none
"""[Fuzzer][Runtime Crash] torch.compile (inductor, cpu) raises at run time: compiled raised RuntimeError: one of the variables needed for gradient computation has been modified by an inplace opera

Found by fuzzcomp (seed 2026006160); bucket runtime-crash-runtime-e0889559.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch


def fn(x0, x1):
    x0.div_(torch.abs(x1) + 1)
    return (x0,)


def inputs():
    x0 = torch.tensor([[1.880212]], dtype=torch.float32)  # float32 (1, 1), strides (1, 1)
    x1 = torch.tensor(-1.7557869, dtype=torch.float32).requires_grad_()  # float32 (), strides (), requires grad
    return [x0, x1]


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
