# fuzzcomp-corpus: status=open torch>=2.11 bucket=aliasing-autograd-824578c9 dedup=known:aliased-input-write-output-requires-grad-lost symptom=aliasing device=cpu issue=none
"""[Known] Two inputs sharing storage, one written in place with a value that requires grad: an output computed from the other comes back with requires_grad=False (gradient lost)

Registry entry aliased-input-write-output-requires-grad-lost; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x0, x1, x3):
    x3.add_(x0)  # x3 is a view of x1: x1 now requires grad in eager
    return x1 * 2


def out_requires_grad(f):
    x0 = torch.tensor(1.0, requires_grad=True)  # float32 ()
    x1 = torch.zeros(2, 2)  # float32 (2, 2)
    return f(x0, x1, x1.t()).requires_grad  # x3 = x1.t(), a view of x1


ref, res = out_requires_grad(fn), out_requires_grad(torch.compile(fn))
if ref != res:
    print(f"BUG: output computed from the aliased input: requires_grad {res} compiled, {ref} in eager")
    raise SystemExit(1)
print("OK: compiled output requires grad as in eager")
