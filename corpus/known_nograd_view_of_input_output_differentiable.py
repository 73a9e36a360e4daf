# fuzzcomp-corpus: status=open torch>=2.11 bucket=gradient-autograd-f26cddac dedup=known:nograd-view-of-input-output-differentiable symptom=gradient device=cpu issue=none
"""[Known] A view of a graph input taken under no_grad and returned comes back differentiable (grad_fn, gradient flows into the input); eager's is a no-grad view

Registry entry nograd-view-of-input-output-differentiable; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    with torch.no_grad():
        return x[::3]


def input_grad(f):
    x = torch.randn(8, generator=torch.Generator().manual_seed(0)).requires_grad_()  # float32 (8,)
    f(x).sum().backward()  # eager's output is a no-grad view (no grad_fn): nothing reaches x
    return x.grad


ref, res = input_grad(fn), input_grad(torch.compile(fn))
if (ref is None) != (res is None):
    print(f"BUG: a view taken under no_grad: backward reaches the input compiled (x.grad {res if res is None else res.tolist()}), eager x.grad {ref}")
    raise SystemExit(1)
print("OK: compiled output is a no-grad view, as in eager")
