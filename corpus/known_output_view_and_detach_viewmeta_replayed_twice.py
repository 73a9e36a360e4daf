# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-output-view-and-detach-viewmeta-replayed-twice dedup=known:output-view-and-detach-viewmeta-replayed-twice symptom=runtime-crash device=cpu issue=none
"""[Known] An output that is a view of an intermediate returned together with its detach(): 'incorrect out shape after application of ViewMeta sequence'

Registry entry output-view-and-detach-viewmeta-replayed-twice; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    v = (x + 1)[:, 1:]
    return v, v.detach()


x = torch.rand(3, 5, 5, generator=torch.Generator().manual_seed(0)).requires_grad_()  # float32 (3, 5, 5)
fn(x)  # eager is fine
try:
    torch.compile(fn)(x)
except Exception as e:
    print(f"BUG: compiled call raised {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call succeeded")
