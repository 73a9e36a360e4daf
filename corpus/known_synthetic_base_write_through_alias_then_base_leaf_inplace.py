# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-autograd-bbb941ed dedup=known:synthetic-base-write-through-alias-then-base-leaf-inplace symptom=compile-crash device=cpu issue=none
"""[Known] Two aliased inputs without grad (x0 and x3 = x0.view(...)): x3.copy_(x1) with x1 requiring grad, then x0.mul_(x1): compile raises 'a leaf Variable that requires grad is being used in an in-place operation'

Registry entry synthetic-base-write-through-alias-then-base-leaf-inplace; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x0, x1, x3):
    x3.copy_(x1)  # x3 is a view of x0; x1 requires grad
    x0.mul_(x1)
    return (x3,)


def inputs():
    x0 = torch.tensor(1.88)  # float32 ()
    x1 = torch.tensor(-1.75, requires_grad=True)  # float32 ()
    return x0, x1, x0.view(x0.shape)


fn(*inputs())  # eager is fine
try:
    torch.compile(fn)(*inputs())
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call succeeded")
