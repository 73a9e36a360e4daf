# fuzzcomp-corpus: status=open torch>=2.11 bucket=runtime-crash-autograd-c6f3ce6d dedup=known:synthetic-base-output-view-regenerated symptom=runtime-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/198095
"""[Known] Two aliased inputs, one written in place: the output view of the other is regenerated from the wrong base

Registry entry synthetic-base-output-view-regenerated; upstream https://github.com/pytorch/pytorch/issues/198095.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x0, x1):
    x0.mul_(-1)
    return x1.unsqueeze(0)


def inputs():
    x0 = torch.arange(9, dtype=torch.float32).view(3, 3)  # float32 (3, 3), strides (3, 1)
    return x0, x0.t()  # x1 is a transposed view of x0


fn(*inputs())  # eager is fine
compiled = torch.compile(fn)
try:
    compiled(*inputs())
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call ran")
