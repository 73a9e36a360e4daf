# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-inductor-af281b3f dedup=known:invoke-subgraph-fake-updater-size1-stride-args symptom=compile-crash device=cpu issue=none
"""[Known] A nested_compile_region called on an input written through an index_put on its transpose and on another tensor of the same shape with a size-1 dim: Inductor 'AssertionError: subgraph args must have consistent values!'

Registry entry invoke-subgraph-fake-updater-size1-stride-args; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


@torch.compiler.nested_compile_region
def h(v):
    return v.sin()


def fn(x):
    x.t()[torch.arange(2)] = 1.0  # an index_put on the transpose writes the input
    return h(x), h(x * 2)  # args (1, 2) with strides (1, 1) and (2, 1)


fn(torch.rand(1, 2))  # eager is fine
try:
    torch.compile(fn)(torch.rand(1, 2, generator=torch.Generator().manual_seed(0)))  # float32 (1, 2)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip()] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call succeeded")
