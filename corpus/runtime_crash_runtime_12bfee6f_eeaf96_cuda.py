# fuzzcomp-corpus: status=open torch>=2.11.0 bucket=runtime-crash-runtime-12bfee6f dedup=runtime-crash-runtime-12bfee6f:cond:torch.sigmoid+cond:torch.sin+cond:torch.tanh+torch.cond+torch.maximum symptom=runtime-crash device=cuda issue=https://github.com/pytorch/pytorch/issues/169778
"""[Fuzzer][Runtime Crash] torch.compile (inductor, cuda) raises at run time: compiled raised AssertionError: expected size 2==2, stride 1088==1040 at dim=0

Found by fuzzcomp (seed 811002917); bucket runtime-crash-runtime-12bfee6f.

Exit 1 while the bug shows, 0 once it is fixed. Needs a CUDA device (exit 3 without).
"""
import traceback

import torch

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def cond_true0(v4):
    v5 = torch.sin(v4)
    return v5


def cond_false0(v6):
    v7 = torch.tanh(v6)
    v8 = torch.sigmoid(v7)
    return v8


def fn(x0, x1):
    v9 = torch.cond((x1 > 2).any(), cond_true0, cond_false0, (x0,))
    v12 = torch.maximum(v9, x0)
    return [v12]


def inputs():
    x0 = (torch.rand((2, 65, 32), generator=torch.Generator().manual_seed(13141346896), dtype=torch.float64) * 4 - 2).bfloat16().to('cuda')[..., ::2].requires_grad_()  # bfloat16 (2, 65, 16), strides (2080, 32, 2): every other column, requires grad
    x1 = torch.tensor(6, dtype=torch.int16).to('cuda')  # int16 (), strides ()
    return [x0, x1]


def run(f, xs):
    out = f(*xs)
    outs = [o for o in out if isinstance(o, torch.Tensor) and o.requires_grad]
    torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])


compiled = torch.compile(fn, dynamic=False)
run(fn, inputs())  # eager is fine
try:
    run(compiled, inputs())
except Exception as e:
    traceback.print_exc()
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled matches eager")
