# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-maxpool2d-backward-unbatched-channels-last dedup=known:maxpool2d-backward-unbatched-channels-last symptom=compile-crash device=cpu issue=none
"""[Known] max_pool2d backward of an unbatched (C, H, W) input of width 1: Inductor LoweringException AssertionError in require_channels_last

Registry entry maxpool2d-backward-unbatched-channels-last; not reported upstream (fix proposed in pull/177568).
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F

# torch 2.13 decomposes this backward into a scatter_add unless deterministic algorithms are on
torch.use_deterministic_algorithms(True)


def fn(x):
    return F.max_pool2d(x, 2)


def run(f):
    x = torch.arange(4.0).view(1, 2, 2).requires_grad_()  # float32 (1, 2, 2): unbatched (C, H, W)
    f(x).sum().backward()


run(fn)  # eager is fine
compiled = torch.compile(fn)
try:
    run(compiled)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call and its backward ran")
