# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-capture-835f5a03 dedup=known:inplace-view-op-stale-size symptom=compile-crash device=cpu issue=none
"""[Known] After unsqueeze_ on an intermediate, Dynamo keeps the old size: 'InternalTorchDynamoError: IndexError: list index out of range'

Registry entry inplace-view-op-stale-size; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    v = x * 2
    v.unsqueeze_(0)  # (3, 4) -> (1, 3, 4)
    return v * v.shape[2]


x = torch.ones(3, 4)  # float32 (3, 4)
fn(x)  # eager is fine
try:
    torch.compile(fn)(x)
except Exception as e:
    print(f"BUG: compiled call raised {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call succeeded")
