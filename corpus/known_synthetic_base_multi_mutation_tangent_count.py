# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-autograd-7e151b20 dedup=known:synthetic-base-multi-mutation-tangent-count symptom=compile-crash device=cpu issue=none
"""[Known] Two or more aliased inputs that require grad, each written in place (e.g. a clone and its slice across a graph break): 'outs_to_grad length (1) != tangents length (2)'

Registry entry synthetic-base-multi-mutation-tangent-count; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(base, view):
    base.add_(1)
    view.add_(1)


def inputs():
    x = torch.randn(4, generator=torch.Generator().manual_seed(0), requires_grad=True)  # float32 (4,)
    a = x.clone()  # a non-leaf that requires grad
    return a, a[1:]  # view is a slice of base: both are written


fn(*inputs())  # eager is fine
compiled = torch.compile(fn)
try:
    compiled(*inputs())
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call ran")
