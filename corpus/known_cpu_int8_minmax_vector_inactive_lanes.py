# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-c7914574 dedup=known:cpu-int8-minmax-vector-inactive-lanes symptom=numeric device=cpu issue=https://github.com/pytorch/pytorch/issues/191499
"""[Known] Inductor CPU: min/max/amin/amax/argmin/argmax over 16 or more int8/uint8 elements return 0 (or -1 for the arg forms)

Registry entry cpu-int8-minmax-vector-inactive-lanes; upstream https://github.com/pytorch/pytorch/issues/191499.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    return torch.amin(x, 0)


x = torch.full((16,), 2, dtype=torch.uint8)  # uint8 (16,)
ref, res = fn(x), torch.compile(fn)(x)
if not torch.equal(ref, res):  # an integer reduction: exact
    print(f"BUG: amin of 16 uint8 twos: eager {ref.item()} compiled {res.item()}")
    raise SystemExit(1)
print("OK: compiled matches eager")
