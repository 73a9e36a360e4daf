# fuzzcomp-corpus: status=open torch>=2.11.0 bucket=compile-crash-inductor-01b34ce1 dedup=compile-crash-inductor-01b34ce1:Tensor.scatter_add_+torch.msort symptom=compile-crash device=cuda issue=none
"""[Fuzzer][Compile Crash] torch.compile (inductor, cuda) fails to compile: compiled raised InductorError: CompilationError: at 8:4:

Found by fuzzcomp (seed 811002646); bucket compile-crash-inductor-01b34ce1.

Exit 1 while the bug shows, 0 once it is fixed. Needs a CUDA device (exit 3 without).
"""
import traceback

import torch

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(x1):
    v0 = torch.msort(x1.transpose(0, 0)).transpose(0, 0)
    x1.scatter_add_(0, torch.arange(x1.shape[0], device=x1.device).flip(0)[:, None].expand_as(x1), v0.to(x1.dtype))
    return (x1,)


def inputs():
    x1 = torch.tensor([[-1]], dtype=torch.int8).to('cuda')  # int8 (1, 1), strides (1, 1)
    return [x1]


compiled = torch.compile(fn)
fn(*inputs())  # eager is fine
try:
    compiled(*inputs())
except Exception as e:
    traceback.print_exc()
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled matches eager")
