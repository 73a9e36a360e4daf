# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-3b5e23a6 dedup=known:expm1-cpu-exp-minus-one symptom=numeric device=cpu issue=https://github.com/pytorch/pytorch/issues/189803
"""[Known] Inductor CPU computes expm1(x) as exp(x) - 1: -0.0 becomes +0.0 and small |x| lose precision

Registry entry expm1-cpu-exp-minus-one; upstream issue https://github.com/pytorch/pytorch/issues/189803.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    return torch.expm1(x)


x = torch.full((32,), -0.0)  # float32 (32,): long enough for the vectorised C++ loop
ref, res = fn(x), torch.compile(fn)(x)
if not torch.equal(torch.signbit(ref), torch.signbit(res)):
    print(f"BUG: expm1(-0.0) compiled is {res[0].item()} (eager {ref[0].item()}): the sign of zero is lost")
    raise SystemExit(1)
print("OK: compiled keeps the sign of zero")
