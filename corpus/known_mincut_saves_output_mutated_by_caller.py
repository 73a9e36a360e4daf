# fuzzcomp-corpus: status=open torch>=2.11 bucket=runtime-crash-decomposition-805c6859 dedup=known:mincut-saves-output-mutated-by-caller symptom=runtime-crash device=cpu issue=none
"""[Known] A graph output that the min-cut partitioner saves for backward is written in place after the graph (by the caller, or by code after a graph break): backward raises 'modified by an inplace operation'

Registry entry mincut-saves-output-mutated-by-caller; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    y = x * 2
    z = torch.tanh(y) + torch.tanh(y + 1)
    return y, z


def run(f):
    x = torch.randn(4, generator=torch.Generator().manual_seed(0), requires_grad=True)  # float32 (4,)
    y, z = f(x)
    y.mul_(2)  # the caller writes into an output: legal, eager's autograd saved only the tanh outputs
    z.sum().backward()


run(fn)  # eager is fine
compiled = torch.compile(fn)
try:
    run(compiled)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call's backward raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call and its backward ran")
