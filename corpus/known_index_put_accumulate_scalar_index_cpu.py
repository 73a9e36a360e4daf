# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-index-put-accumulate-scalar-index-cpu dedup=known:index-put-accumulate-scalar-index-cpu symptom=compile-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/160391
"""[Known] CPU Inductor: index_put(accumulate=True) of a 0-dim value at repeated indices fails in C++ codegen ('assert isinstance(index, CppCSEVariable) and index.is_vec')

Registry entry index-put-accumulate-scalar-index-cpu; upstream https://github.com/pytorch/pytorch/issues/160391.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    # the indices and the 0-dim value are built in the graph: the destination index is a constant
    return torch.index_put(x, (torch.zeros(5, dtype=torch.long),), torch.tensor(1.25), accumulate=True)


x = torch.full((3,), 0.5)  # float32 (3,)

fn(x)  # eager is fine
compiled = torch.compile(fn)
try:
    compiled(x)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call ran")
