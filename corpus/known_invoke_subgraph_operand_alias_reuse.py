# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-invoke-subgraph-operand-alias-reuse dedup=known:invoke-subgraph-operand-alias-reuse symptom=gradient device=cpu issue=none
"""[Known] A reused nested_compile_region with backward: Inductor hands the storage of a region operand that the forward subgraph returns as a saved activation to a later kernel; gradients are silently wrong

Registry entry invoke-subgraph-operand-alias-reuse; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same


@torch.compiler.nested_compile_region
def h(v):
    return torch.sin(v)


def fn(x, y):
    return h(x), h(x * 2), y.cos()  # the region is called twice (else it is inlined); x * 2 is an intermediate


def grad(f, dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, generator=g, dtype=dtype, requires_grad=True)  # (4,)
    y = torch.randn(4, generator=g, dtype=dtype)  # (4,): its kernel can take over x * 2's buffer
    sum(o.sum() for o in f(x, y)).backward()
    return x.grad


ref, fp64, res = grad(fn), grad(fn, torch.float64), grad(torch.compile(fn))
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: x.grad differs: max abs diff {(ref - res).abs().max().item():.3g}")
    raise SystemExit(1)
print("OK: compiled gradient matches eager")
