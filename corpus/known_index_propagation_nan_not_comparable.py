# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-inductor-5b1d01dc dedup=known:index-propagation-nan-not-comparable symptom=compile-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/188225
"""[Known] Inductor index propagation compares a sympy expression holding nan: 'ValueError: The argument 'nan' is not comparable' at compile time

Registry entry index-propagation-nan-not-comparable; upstream issue https://github.com/pytorch/pytorch/issues/188225.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    return torch.softmax(torch.sqrt(torch.full_like(x, float("-inf"))), 0)


x = torch.zeros(7, 7, 7)  # float32 (7, 7, 7); only its shape matters
fn(x)  # eager is fine (all NaN)
try:
    torch.compile(fn)(x)
except Exception as e:
    print(f"BUG: compiled call raised {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call succeeded")
