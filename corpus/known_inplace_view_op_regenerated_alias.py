# fuzzcomp-corpus: status=open torch>=2.11 bucket=runtime-crash-autograd-29904d1b dedup=known:inplace-view-op-regenerated-alias symptom=runtime-crash device=cpu issue=none
"""[Known] An output viewed from another after unsqueeze_: 'incorrect out shape after application of ViewMeta sequence'

Registry entry inplace-view-op-regenerated-alias; not reported upstream (fix proposed in pull/186561).
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    a = x + 1
    a.unsqueeze_(0)
    return a, a[0]  # output 1 is a view of output 0, taken after the in-place view op


x = torch.randn(2, 3, generator=torch.Generator().manual_seed(0), requires_grad=True)  # float32 (2, 3)

fn(x)  # eager is fine
compiled = torch.compile(fn)
try:
    compiled(x)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call ran")
