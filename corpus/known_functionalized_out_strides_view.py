# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-autograd-8a10e08f dedup=known:functionalized-out-strides-view symptom=compile-crash device=cpu issue=none
"""[Known] An out= or in-place op rewritten by functionalization keeps the functional result's strides: a later view fails ('Cannot view a tensor with shape ...')

Registry entry functionalized-out-strides-view; not reported upstream (the silent form is issues/133512).
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    out = torch.empty(3, 3)  # contiguous, and the right size: out= keeps its strides in eager
    torch.neg(x, out=out)
    return out.view(-1)


x = torch.randn(3, 3, generator=torch.Generator().manual_seed(0)).t()  # float32 (3, 3), strides (1, 3)

fn(x)  # eager is fine
compiled = torch.compile(fn)
try:
    compiled(x)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call ran")
