# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-autograd-709daba6 dedup=known:backward-autocast-same-as-forward symptom=compile-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/153044
"""[Known] Backward compiled under the forward's autocast: 'Unexpected floating ScalarType in at::autocast::prioritize'

Registry entry backward-autocast-same-as-forward; upstream issue https://github.com/pytorch/pytorch/issues/153044.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    a, b = x.unbind(0)  # backward: stack of two float16 gradients, a 'promote' op under autocast
    return a * b


def run(f):
    x = torch.randn(2, 3, dtype=torch.float16, generator=torch.Generator().manual_seed(0)).requires_grad_()  # float16 (2, 3)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = f(x)
    out.sum().backward()  # eager runs backward outside autocast


run(fn)  # eager is fine
try:
    run(torch.compile(fn))
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled forward and backward succeeded")
