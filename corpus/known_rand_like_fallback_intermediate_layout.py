# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-fc780510 dedup=known:rand-like-fallback-intermediate-layout symptom=numeric device=cpu issue=none
"""[Known] fallback_random: rand_like / randn_like of an intermediate that Inductor lays out differently from eager (e.g. masked_fill of a transposed or channels-last input) draws the numbers in another memory order

Registry entry rand-like-fallback-intermediate-layout; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
import torch._inductor.config

torch._inductor.config.fallback_random = True  # compiled RNG must then match eager's draws


def fn(x):
    return torch.rand_like(x.t().masked_fill(torch.tensor([True, False, True]), 0.5))


x = torch.zeros(3, 3)  # float32 (3, 3), strides (3, 1)
compiled = torch.compile(fn)
compiled(x)  # compile first, so that compiling draws nothing between the seed and the call
torch.manual_seed(0)
ref = fn(x)
torch.manual_seed(0)
res = compiled(x)
if not torch.equal(ref, res):
    print(f"BUG: rand_like draws other values compiled (equal to eager's transposed: {torch.equal(ref, res.t())})")
    raise SystemExit(1)
print("OK: compiled draws the same values as eager")
