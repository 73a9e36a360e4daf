# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-inductor-saved-input-view-version-counter-lost dedup=known:inductor-saved-input-view-version-counter-lost symptom=error-parity device=cpu issue=https://github.com/pytorch/pytorch/issues/197887
"""[Known] Inductor saves a view of a graph input for backward (slice, chunk, mm operand) as a reinterpret_tensor that does not share the input's version counter: an in-place write to the input between forward and backward is not detected and backward uses the written values

Registry entry inductor-saved-input-view-version-counter-lost; upstream issue https://github.com/pytorch/pytorch/issues/197887.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    v = x[:2]  # a view of the input, saved for backward by the matmul
    return torch.tanh(v @ v.t())


def backward_after_write(f):
    x = torch.randn(4, 4, generator=torch.Generator().manual_seed(0)).requires_grad_()  # float32 (4, 4)
    out = f(x)
    with torch.no_grad():
        x.mul_(2)  # the caller writes the input between forward and backward
    try:
        out.sum().backward()
    except RuntimeError as e:
        return str(e).splitlines()[0]
    return None


eager = backward_after_write(fn)
assert eager is not None and "modified by an inplace operation" in eager
if backward_after_write(torch.compile(fn)) is None:
    print(f"BUG: compiled backward raised nothing after the input was written; eager raised: {eager[:150]}")
    raise SystemExit(1)
print("OK: compiled backward raises like eager")
