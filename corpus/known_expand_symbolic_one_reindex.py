# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-e242ed51 dedup=known:expand-symbolic-one-reindex symptom=numeric device=cpu issue=none
"""[Known] dynamic=True: expand of a dim whose size is a symbolic expression equal to 1 ((2*s - 1)//s, from arange(0, n, n) or embedding_bag's offsets) reads past its buffer in Inductor

Registry entry expand-symbolic-one-reindex; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same


def fn(x):
    n = x.shape[0]
    v = (torch.arange(0, n, n).float() + 1).unsqueeze(1) * x  # (1, n): its size 1 is symbolic under dynamic=True
    return v.sin().expand(n, -1)


x = torch.arange(1.0, 5.0)  # float32 (4,)
ref, fp64, res = fn(x), fn(x.double()), torch.compile(fn, dynamic=True)(x)
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: compiled output differs from eager: rows equal eager's row 0: {[torch.equal(r, ref[0]) for r in res]}")
    raise SystemExit(1)
print("OK: compiled matches eager")
