# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-decomposition-3ada476f dedup=known:invoke-subgraph-gen-schema-out-overload-decomp symptom=compile-crash device=cpu issue=none
"""[Known] An out= op (torch.amax(..., out=), torch.clamp(..., out=)) inside a nested_compile_region called twice with grad on: 'amax() got an unexpected keyword argument 'out'' from Inductor's decomposition

Registry entry invoke-subgraph-gen-schema-out-overload-decomp; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


@torch.compiler.nested_compile_region
def h(v):
    torch.amax(v.detach(), 0, keepdim=True, out=torch.empty(1))
    return v.sigmoid()


def fn(x):
    return h(x), h(x)  # called twice: a single call is inlined


x = torch.rand(1, generator=torch.Generator().manual_seed(0), requires_grad=True)  # float32 (1,)

fn(x)  # eager is fine
compiled = torch.compile(fn)
try:
    compiled(x)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call ran")
