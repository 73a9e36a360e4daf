# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-invoke-subgraph-no-tensor-operand-device dedup=known:invoke-subgraph-no-tensor-operand-device symptom=compile-crash device=cpu issue=none
"""[Known] A nested_compile_region whose body takes no tensor operand (only constants or its argument's static shape), called twice: Inductor LoweringException AssertionError in invoke_subgraph

Registry entry invoke-subgraph-no-tensor-operand-device; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


@torch.compiler.nested_compile_region
def h():
    return torch.ones(5)


def fn(x):
    return x + h() + h()  # the region is called twice and reads no tensor


x = torch.randn(5, generator=torch.Generator().manual_seed(0))  # float32 (5,)
fn(x)  # eager is fine
try:
    torch.compile(fn, fullgraph=True)(x)
except Exception as e:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    target = [ln for ln in lines if ln.startswith("target:")] + [""]  # the first line ends at 'AssertionError:'
    print(f"BUG: compiled call raised {type(e).__name__}: {lines[0][:150]} {target[0][:60]}")
    raise SystemExit(1)
print("OK: compiled call succeeded")
