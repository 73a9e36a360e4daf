# fuzzcomp-corpus: status=open torch>=2.11,<2.13 bucket=compile-crash-decomposition-853fd3f7 dedup=known:index-fill-strided-copy symptom=compile-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/148952
"""[Known] index_fill on a non-contiguous input: AOTAutograd asserts 'n=copy_, n.args[0]=permute' (or '=empty')

Registry entry index-fill-strided-copy; upstream https://github.com/pytorch/pytorch/issues/148952.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x, idx):
    return x.index_fill_(0, idx, 17.0)


x = torch.randn(2, 2, 2, 2, generator=torch.Generator().manual_seed(0))
x = x.contiguous(memory_format=torch.channels_last)  # float32 (2, 2, 2, 2), strides (8, 1, 4, 2)
idx = torch.tensor([1])

fn(x.clone(), idx)  # eager is fine
compiled = torch.compile(fn)
try:
    compiled(x.clone(), idx)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call ran")
