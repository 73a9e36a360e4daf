# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-dynamo-fake-view-replay-after-inplace-view-op dedup=known:dynamo-fake-view-replay-after-inplace-view-op symptom=compile-crash device=cpu issue=none
"""[Known] A view taken before an in-place view op (squeeze_) on its base, with grad: Dynamo's fake propagation raises 'Expected cond to be True' when the view is used

Registry entry dynamo-fake-view-replay-after-inplace-view-op; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    v0 = torch.round(x)
    v1 = v0.expand(15, -1, 15)  # a view taken before the in-place view op on its base
    v0.squeeze_(1)
    return torch.clone(v1)


x = torch.randn(15, 1, generator=torch.Generator().manual_seed(0), dtype=torch.float64, requires_grad=True)

fn(x)  # eager is fine
compiled = torch.compile(fn, backend="eager")  # Dynamo's own bug: no backend needed
try:
    compiled(x)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call ran")
