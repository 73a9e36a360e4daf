# fuzzcomp-corpus: status=open torch>=2.11 bucket=runtime-crash-inductor-1a5f24a2 dedup=known:aliased-inputs-replaced-symint-unbound symptom=runtime-crash device=cpu issue=none
"""[Known] Two inputs, one a view of the other, combined in an in-place op, with sizes that change: Inductor's generated code raises 'NameError: name 's0' is not defined'

Registry entry aliased-inputs-replaced-symint-unbound; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
import torch._functorch.config
import torch._inductor.config

torch._inductor.config.fx_graph_cache = False  # a cached graph from an earlier run would skip the compile
torch._functorch.config.enable_autograd_cache = False


def fn(x1, x2):
    x2.add_(x1)
    return x2


def inputs(n):
    base = torch.randn(n, n, generator=torch.Generator().manual_seed(n))  # float32 (n, n)
    return base[:], base[:]  # two views of the same base


compiled = torch.compile(fn)
for n in (3, 2):  # the sizes change: the second call recompiles with dynamic sizes
    fn(*inputs(n))  # eager is fine
    try:
        compiled(*inputs(n))
    except Exception as e:
        why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
        print(f"BUG: call with n={n}: compiled call raised {type(e).__name__}: {why[0][:200]}")
        raise SystemExit(1)
print("OK: compiled calls ran")
