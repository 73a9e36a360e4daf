# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-autograd-62d49fa2 dedup=known:cond-backward-zeros-like-stride-order symptom=compile-crash device=cpu issue=none
"""[Known] torch.cond backward, dynamic=True, with a transposed operand one branch ignores: 'The sorted order of strides of the two branches' output doesn't match'

Registry entry cond-backward-zeros-like-stride-order; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x, y):
    return torch.cond(x.shape[0] > 2, lambda a, b: a + b, lambda a, b: a.clone(), (x, y))  # false branch ignores b


def run(f):
    x = torch.randn(4, 4, generator=torch.Generator().manual_seed(0))  # float32 (4, 4), strides (4, 1)
    y = torch.randn(4, 4, generator=torch.Generator().manual_seed(1)).t().requires_grad_()  # float32 (4, 4), strides (1, 4)
    f(x, y).sum().backward()


run(fn)  # eager is fine
try:
    run(torch.compile(fn, dynamic=True))
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled forward and backward succeeded")
