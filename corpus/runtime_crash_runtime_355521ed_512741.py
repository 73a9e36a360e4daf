# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=runtime-crash-runtime-355521ed dedup=runtime-crash-runtime-355521ed:Tensor.add_[scalar]+cond:mix+cond:torch.cos+torch.cond symptom=runtime-crash device=cpu issue=none
"""[Fuzzer][Runtime Crash] torch.compile (inductor, cpu) raises at run time: compiled raised AssertionError: expected size 2==2, stride 1==2 at dim=0; expected size 2==2, stride 2==1 at dim=1

Found by fuzzcomp (seed 2027009293); bucket runtime-crash-runtime-355521ed.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch


def cond_true0(v0, v1):
    v2 = torch.cos(v0)
    return v2


def cond_false0(v3, v4):
    v5 = v3 * 0.5 + v4 * 0.5
    v6 = v5 * 0.5 + v4 * 0.5
    return v6


def fn(x2):
    v7 = torch.cond(x2.shape[0] > 65, cond_true0, cond_false0, (x2, x2))
    v7.t().add_(1)
    return (v7,)


def inputs():
    x2 = torch.tensor([[1.880212, 0.83127946], [-0.16246822, 1.6829908]], dtype=torch.float32).requires_grad_()  # float32 (2, 2), strides (2, 1), requires grad
    return [x2]


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
