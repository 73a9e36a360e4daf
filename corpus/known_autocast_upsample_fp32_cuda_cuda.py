# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-autograd-0a9d701b dedup=known:autocast-upsample-fp32-cuda symptom=numeric device=cuda issue=none
"""[Known] CUDA autocast: interpolate(mode='nearest') is float32 in eager, bfloat16 compiled

Registry entry autocast-upsample-fp32-cuda; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(x):
    y = x @ x.transpose(-1, -2)  # bfloat16 under autocast
    return F.interpolate(y, scale_factor=(2, 2, 0.5), mode="nearest")  # upsample_nearest3d: an fp32 autocast op


x = torch.randn(1, 1, 2, 4, 4, generator=torch.Generator().manual_seed(0)).cuda()  # float32 (1, 1, 2, 4, 4)
compiled = torch.compile(fn)
with torch.autocast("cuda", dtype=torch.bfloat16):
    ref, res = fn(x), compiled(x)
if ref.dtype != res.dtype:
    print(f"BUG: output dtype under autocast: eager {ref.dtype}, compiled {res.dtype}")
    raise SystemExit(1)
print("OK: compiled output dtype matches eager")
