# fuzzcomp-corpus: status=open torch>=2.11 bucket=runtime-crash-inductor-7da4a448 dedup=known:cpu-scalar-buffer-triton-pointer symptom=runtime-crash device=cuda issue=none verified=no
"""[Known] CUDA, dynamic=True: a tensor divided by a Python float with grad raises 'CUDA driver error: invalid argument' (a 0-d CPU buffer handed to a Triton kernel as a pointer)

Registry entry cpu-scalar-buffer-triton-pointer; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed. verified=no: its first form (forward only)
passed on torch 2.11 (H200, 2026-12-05); the saved 0-d CPU tensor is read by the backward.
"""
import torch

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(s, p):
    return p / s


p = torch.nn.Parameter(torch.randn(4, device="cuda", generator=torch.Generator("cuda").manual_seed(0)))  # float32 (4,)
fn(-1.25, p).sum().backward()  # eager is fine
try:
    torch.compile(fn, dynamic=True)(-1.25, p).sum().backward()  # the backward divides by the saved scalar
except Exception as e:
    print(f"BUG: compiled call raised {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}")
    raise SystemExit(1)
print("OK: compiled forward and backward succeeded")
