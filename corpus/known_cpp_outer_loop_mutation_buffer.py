# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-inductor-a823cd96 dedup=known:cpp-outer-loop-mutation-buffer symptom=compile-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/196570
"""[Known] CPU Inductor: KeyError 'bufN' when outer-loop fusion promotes a mutation-output buffer to a local buffer

Registry entry cpp-outer-loop-mutation-buffer; upstream issue https://github.com/pytorch/pytorch/issues/196570.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    x.mul_(torch.softmax(x, 4))
    return x


def inputs():
    return torch.randn(1, 3, 1, 8, 8, generator=torch.Generator().manual_seed(0))  # float32 (1, 3, 1, 8, 8), contiguous


fn(inputs())  # eager is fine
try:
    torch.compile(fn)(inputs())
except Exception as e:
    print(f"BUG: compiled call raised {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call succeeded")
