# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-cpp-small-int-sign-abs-minmax-type dedup=known:cpp-small-int-sign-abs-minmax-type symptom=compile-crash device=cpu issue=none
"""[Known] Inductor CPU: maximum/minimum/clamp of sign(x) or abs(x) with x int8/int16: C++ compile error 'no matching function for call to max_propagate_nan(int&, short int&)'

Registry entry cpp-small-int-sign-abs-minmax-type; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    return torch.maximum(torch.sign(x), x)


x = torch.tensor([-3, 0, 5, 2], dtype=torch.int16)  # int16 (4,)

fn(x)  # eager is fine
compiled = torch.compile(fn)
try:
    compiled(x)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call ran")
