# fuzzcomp-corpus: status=open torch>=2.11,<2.13 bucket=compile-crash-inductor-070c6a93 dedup=known:view-dtype-size-change-intermediate-stride symptom=compile-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/185515
"""[Known] x.contiguous() (or .to(dtype, memory_format=torch.contiguous_format)) then .view(a dtype of another size) on a transposed input: LoweringException 'self.stride(-1) must be 1 to view BFloat16 as Int (different element sizes)'

Registry entry view-dtype-size-change-intermediate-stride; upstream https://github.com/pytorch/pytorch/issues/185515.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    return x.to(torch.bfloat16, memory_format=torch.contiguous_format).view(torch.int32)


x = torch.tensor([[1.0, 2.0], [3.0, 4.0]]).t()  # float32 (2, 2), strides (1, 2)

fn(x)  # eager is fine: the contiguous copy has stride(-1) == 1
compiled = torch.compile(fn)
try:
    compiled(x)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call ran")
