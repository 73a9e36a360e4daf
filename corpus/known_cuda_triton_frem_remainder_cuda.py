# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-2be2ec62 dedup=known:cuda-triton-frem-remainder symptom=numeric device=cuda issue=none
"""[Known] Inductor CUDA: float remainder / % is lowered to Triton's '%' (LLVM frem), which NVPTX expands to x - trunc(x/y)*y and, for |y| == inf, returns x: remainder(+-inf, +-inf) with equal signs gives +-inf where eager gives NaN

Registry entry cuda-triton-frem-remainder; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(a, b):
    return torch.remainder(a, b)


inf = float("inf")
a = torch.tensor([inf, -inf, 5.0], device="cuda")  # float32 (3,)
b = torch.tensor([inf, -inf, 3.0], device="cuda")  # float32 (3,)
ref, res = fn(a, b), torch.compile(fn)(a, b)
if not torch.equal(ref.isnan(), res.isnan()):  # the point is the NaN of inf % inf (same() skips NaN references)
    print(f"BUG: remainder([inf, -inf, 5], [inf, -inf, 3]) compiled {res.tolist()}, eager {ref.tolist()}")
    raise SystemExit(1)
print("OK: compiled gives NaN where eager does")
