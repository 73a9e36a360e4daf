# fuzzcomp-corpus: status=open torch>=2.11 bucket=runtime-crash-capture-f4120422 dedup=known:invoke-subgraph-eager-autograd-fake-mode symptom=runtime-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/178520
"""[Known] torch.compiler.nested_compile_region under backend='eager' with grad on: backward raises 'fake_mode should be enabled for HOPs'

Registry entry invoke-subgraph-eager-autograd-fake-mode; upstream issue https://github.com/pytorch/pytorch/issues/178520.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


@torch.compiler.nested_compile_region
def h(x):
    return torch.sin(x)


def fn(x):
    return h(x) + h(x * 2)  # the region is called twice


def run(f):
    x = torch.randn(4, generator=torch.Generator().manual_seed(0)).requires_grad_()  # float32 (4,)
    f(x).sum().backward()


run(fn)  # eager is fine
try:
    run(torch.compile(fn, backend="eager"))
except Exception as e:
    print(f"BUG: compiled call raised {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}")
    raise SystemExit(1)
print("OK: compiled forward and backward succeeded")
