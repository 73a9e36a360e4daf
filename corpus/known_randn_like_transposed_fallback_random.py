# fuzzcomp-corpus: status=open torch>=2.11,<2.13 bucket=known-randn-like-transposed-fallback-random dedup=known:randn-like-transposed-fallback-random symptom=numeric device=cpu issue=https://github.com/pytorch/pytorch/issues/177652
"""[Known] fallback_random: randn_like of a non-contiguous (transposed) tensor draws another stream compiled (contiguous draw, then a permute)

Registry entry randn-like-transposed-fallback-random; upstream https://github.com/pytorch/pytorch/issues/177652.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
import torch._inductor.config

torch._inductor.config.fallback_random = True  # compiled RNG must then match eager's draws


def fn(x):
    return torch.randn_like(x)


x = torch.zeros(4, 4).t()  # float32 (4, 4), strides (1, 4); with fewer than 16 elements both draw the same values
compiled = torch.compile(fn)
compiled(x)  # compile first, so that compiling draws nothing between the seed and the call
torch.manual_seed(0)
ref = fn(x)
torch.manual_seed(0)
res = compiled(x)
if not torch.equal(ref, res):
    print(f"BUG: randn_like of a transposed input draws other values compiled: max abs diff {(ref - res).abs().max().item():.3g}")
    raise SystemExit(1)
print("OK: compiled draws the same values as eager")
