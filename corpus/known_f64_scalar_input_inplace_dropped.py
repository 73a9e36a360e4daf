# fuzzcomp-corpus: status=open torch>=2.11 bucket=mutation-autograd-3666f361 dedup=known:f64-scalar-input-inplace-dropped symptom=mutation device=cpu issue=none
"""[Known] An in-place op on a 0-dim float64 CPU input is dropped (aot_eager and inductor): the input keeps its old value

Registry entry f64-scalar-input-inplace-dropped; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(y):
    y.add_(1)  # the in-place result is unused


def after(f):
    y = torch.tensor(0.5, dtype=torch.float64)  # float64 (), a 0-dim CPU input
    f(y)
    return y.item()


ref, res = after(fn), after(torch.compile(fn))
if ref != res:
    print(f"BUG: y.add_(1) on a 0-dim float64 input: y is {res} after the compiled call, {ref} after eager")
    raise SystemExit(1)
print("OK: the compiled call writes the input as eager does")
