# fuzzcomp-corpus: status=open torch>=2.11,<2.13 bucket=known-frac-negative-zero-decomposition dedup=known:frac-negative-zero-decomposition symptom=numeric device=cpu issue=https://github.com/pytorch/pytorch/issues/183606
"""[Known] frac(-0.0) is -0.0 compiled, +0.0 in eager (the frac decomposition)

Registry entry frac-negative-zero-decomposition; upstream https://github.com/pytorch/pytorch/issues/183606.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    return torch.frac(x)


x = torch.tensor([-0.0, -2.0, 0.0, -1.5])  # float32 (4,)
ref, res = fn(x), torch.compile(fn)(x)
if not torch.equal(torch.signbit(ref), torch.signbit(res)) or not torch.equal(ref, res):
    print(f"BUG: frac sign of zero differs: eager={ref.tolist()} compiled={res.tolist()}")
    raise SystemExit(1)
print("OK: compiled matches eager, signs of zero included")
