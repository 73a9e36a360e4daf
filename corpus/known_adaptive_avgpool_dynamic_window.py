# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-inductor-df3de30d dedup=known:adaptive-avgpool-dynamic-window symptom=compile-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/185575
"""[Known] interpolate(mode='area') with sizes that turned dynamic: 'cannot determine truth value of Relational'

Registry entry adaptive-avgpool-dynamic-window; upstream issue https://github.com/pytorch/pytorch/issues/185575.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


def fn(x):
    return F.interpolate(x, scale_factor=0.5, mode="area")


x = torch.randn(1, 2, 7, 11, generator=torch.Generator().manual_seed(0))  # float32 (1, 2, 7, 11), contiguous
fn(x)  # eager is fine
try:
    torch.compile(fn, dynamic=True)(x)
except Exception as e:
    print(f"BUG: compiled call raised {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call succeeded")
