# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-capture-d393eefc dedup=known:nested-region-reuse-bound-symbol-keyerror symptom=compile-crash device=cpu issue=none
"""[Known] A nested_compile_region called twice whose body builds an index from its argument's sizes (arange(v.shape[1]) ... expand(v.shape[0], -1, v.shape[2])) under dynamic shapes: Dynamo raises InternalTorchDynamoError KeyError: <size> when it reuses the region

Registry entry nested-region-reuse-bound-symbol-keyerror; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


@torch.compiler.nested_compile_region
def nr(v):
    idx = torch.arange(v.shape[1]).flip(0)[None, :, None].expand(v.shape[0], -1, v.shape[2])
    return torch.take_along_dim(v, idx, 1)


def fn(x):
    return nr(x), nr(x)  # the second call reuses the region


x = torch.rand(2, 3, 4, generator=torch.Generator().manual_seed(0))  # float32 (2, 3, 4)
fn(x)  # eager is fine
try:
    torch.compile(fn, backend="eager", dynamic=True)(x)
except Exception as e:
    print(f"BUG: compiled call raised {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call succeeded")
