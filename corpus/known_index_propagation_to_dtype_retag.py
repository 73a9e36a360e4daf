# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-inductor-879fea66 dedup=known:index-propagation-to-dtype-retag symptom=compile-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/194062
"""[Known] Inductor index propagation retags a cast of an index expression (int -> bool, narrowing int) without converting it: CPU C++ compile error "'Vectorized<bool>' has no member named 'cast'" for logical_and/or/xor or where() on an arange cast to bool; silently wrong values for arange(...).bool(), arange(...).bool().int(), arange(...).to(int8)

Registry entry index-propagation-to-dtype-retag; upstream issue https://github.com/pytorch/pytorch/issues/194062.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    v = torch.arange(x.shape[0])  # int64 index expression, cast to bool by logical_xor
    return torch.logical_xor(v, v)


x = torch.zeros(4)  # float32 (4,); only its size matters
fn(x)  # eager is fine
try:
    torch.compile(fn)(x)
except Exception as e:
    err = [ln[ln.find("error:"):] for ln in str(e).splitlines() if "error:" in ln] + [str(e).strip().splitlines()[0]]
    print(f"BUG: compiled call raised {type(e).__name__}: {err[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call succeeded")
