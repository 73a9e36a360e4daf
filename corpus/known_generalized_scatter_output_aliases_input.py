# fuzzcomp-corpus: status=open torch>=2.11 bucket=aliasing-inductor-520e7931 dedup=known:generalized-scatter-output-aliases-input symptom=aliasing device=cpu issue=https://github.com/pytorch/pytorch/issues/195451
"""[Known] An input written through a view of it (an aliasing input): a clone or repeat(1, 1) of the input comes back as the input itself

Registry entry generalized-scatter-output-aliases-input; upstream https://github.com/pytorch/pytorch/issues/195451.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    x[::2].add_(1)
    return x.clone()


def shares(out, x):
    return out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


x = torch.arange(4.0)  # float32 (4,), strides (1,)
eager_shares = shares(fn(x), x)
x = torch.arange(4.0)
res = torch.compile(fn)(x)
if shares(res, x) != eager_shares:
    print(f"BUG: the clone of the written input shares its storage compiled={shares(res, x)} eager={eager_shares}")
    raise SystemExit(1)
print("OK: the clone is a fresh tensor, as in eager")
