# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-0ba0688d dedup=known:inductor-any-uint8-returns-bool symptom=numeric device=cpu issue=https://github.com/pytorch/pytorch/issues/198081
"""[Known] torch.any / Tensor.any on a uint8 tensor: Inductor returns bool where eager returns uint8 (downstream uint8 arithmetic then changes value)

Registry entry inductor-any-uint8-returns-bool; upstream issue https://github.com/pytorch/pytorch/issues/198081.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    return x.any(1)


x = torch.tensor([[0, 3], [0, 0]], dtype=torch.uint8)  # uint8 (2, 2)
ref, res = fn(x), torch.compile(fn)(x)
if ref.dtype != res.dtype:
    print(f"BUG: uint8 any(1): compiled dtype {res.dtype}, eager {ref.dtype}")
    raise SystemExit(1)
print("OK: compiled keeps eager's dtype")
