# fuzzcomp-corpus: status=open torch>=2.11 bucket=runtime-crash-capture-4549d0d8 dedup=known:fake-view-of-mutated-requires-grad symptom=runtime-crash device=cpu issue=none
"""[Known] x2.mul_(x1) with x1 requiring grad, then a view of x2: Dynamo's fake view disagrees on requires_grad ('AssertionError: False != True')

Registry entry fake-view-of-mutated-requires-grad; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x1, x2, x3):
    x2.mul_(x1)  # x1 requires grad, so x2 (and its view x3) now require grad
    return x3 * 2


def inputs():
    x1 = torch.tensor([1.5, -0.5], requires_grad=True)  # float32 (2,)
    x2 = torch.tensor([2.0, 3.0])  # float32 (2,)
    return x1, x2, x2.view(2)  # x3 is a view of x2


fn(*inputs())  # eager is fine
try:
    torch.compile(fn)(*inputs())
except Exception as e:
    print(f"BUG: compiled call raised {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call succeeded")
