# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-945c858f dedup=known:welford-combine-inf-var-nan-class symptom=numeric device=cuda issue=none
"""[Known] CUDA, dynamic shapes: torch.var over data holding one inf gives inf where eager gives NaN (Triton welford_combine)

Registry entry welford-combine-inf-var-nan-class; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(x):
    return torch.var(x, 0)


x = torch.randn(2, 2, 3, device="cuda", generator=torch.Generator("cuda").manual_seed(0))  # float32 (2, 2, 3)
x[1, 0, 2] = float("inf")  # element [0, 2] of the result reduces {finite, inf}: NaN in eager
ref, res = fn(x), torch.compile(fn, dynamic=True)(x)  # a symbolic reduction size takes the Welford path
if not torch.equal(ref.isnan(), res.isnan()):  # the point is NaN vs inf (same() skips NaN references)
    print(f"BUG: var over a dim holding inf: compiled {res[0, 2].item()} at [0, 2], eager {ref[0, 2].item()}")
    raise SystemExit(1)
print("OK: compiled gives NaN where eager does")
