# fuzzcomp-corpus: status=open torch>=2.11 bucket=aliasing-inductor-3dd7c960 dedup=known:dropout-noop-returns-input-decomp-clones symptom=aliasing device=cpu issue=https://github.com/pytorch/pytorch/issues/115249
"""[Known] F.dropout that eager short-circuits (training=False, p=0, or a 0-element input) returns the input itself in eager; under Inductor it returns a fresh tensor

Registry entry dropout-noop-returns-input-decomp-clones; upstream https://github.com/pytorch/pytorch/issues/115249.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


def fn(x):
    return F.dropout(x, p=0.5, training=False)


def shares(out, x):
    return out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


x = torch.ones(2, 2)  # float32 (2, 2), strides (2, 1)
eager_shares, compiled_shares = shares(fn(x), x), shares(torch.compile(fn)(x), x)
if compiled_shares != eager_shares:
    print(f"BUG: dropout(training=False) output shares the input's storage: eager={eager_shares} compiled={compiled_shares}")
    raise SystemExit(1)
print("OK: compiled output aliases the input as in eager")
