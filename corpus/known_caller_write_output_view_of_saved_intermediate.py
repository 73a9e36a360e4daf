# fuzzcomp-corpus: status=open torch>=2.11 bucket=gradient-autograd-051d603d dedup=known:caller-write-output-view-of-saved-intermediate symptom=gradient device=cpu issue=none
"""[Known] The caller writes an output that is a view of an intermediate saved for backward: eager's backward raises 'modified by an inplace operation', compiled raises nothing and returns gradients of the written values

Registry entry caller-write-output-view-of-saved-intermediate; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    return torch.tanh(x)[:, 1::2]  # a view of tanh's output, which tanh saves for backward


def backward_after_write(f):
    x = torch.linspace(-1, 1, 16).reshape(4, 4).requires_grad_()  # float32 (4, 4)
    out = f(x)
    out.mul_(3)  # the caller writes the output
    try:
        out.sum().backward()
    except RuntimeError as e:
        return str(e).splitlines()[0]
    return None


eager = backward_after_write(fn)
assert eager is not None and "modified by an inplace operation" in eager
if backward_after_write(torch.compile(fn, backend="aot_eager")) is None:
    print(f"BUG: compiled backward raised nothing after the output was written (wrong x.grad); eager raised: {eager[:120]}")
    raise SystemExit(1)
print("OK: compiled backward raises like eager")
