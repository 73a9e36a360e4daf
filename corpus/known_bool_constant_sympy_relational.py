# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-inductor-a0a13a59 dedup=compile-crash-inductor-a0a13a59:Tensor.__getitem__[index]+torch.eq+torch.logical_and+torch.ones symptom=compile-crash device=cpu issue=https://github.com/pytorch/pytorch/issues/188231
"""[Fuzzer][Compile Crash] torch.compile (inductor, cpu) fails to compile: InductorError: TypeError: A Boolean argument can only be used in Eq and Ne; all other relationals expect real expressions

Found by fuzzcomp 0.1.0 (seed 1603005180) on torch 2.13.0+cpu; bucket compile-crash-inductor-a0a13a59.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch
import torch._dynamo.config

torch._dynamo.config.capture_dynamic_output_shape_ops = True
torch._dynamo.config.capture_scalar_outputs = False


def fn(x0):
    v1 = torch.ones(x0.shape, dtype=x0.dtype, device=x0.device)
    v4 = v1[torch.arange(v1.shape[0], device=v1.device).flip(0)]
    v8 = torch.logical_and(v4, v1)
    v9 = torch.eq(v4, v8)
    return (v9,)


def inputs():
    x0 = torch.tensor([False], dtype=torch.bool)  # bool (1,), strides (1,)
    return [x0]


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
# fuzzcomp-case: eNrVVU2P2jAQ/Ssop0XaomQ/qt2Veqh66q1q94aQZZJJsHBs4w8KRfz3ztgBspDdSlUrtSfMm/HzvDfOeJcxnz2Nsk/cQXY9ykoupUNgh3gwEnA53R1zpDzkgD1Lmu0x0kg95xf7U8jyirW6IiT+ISaharCgSmBCmeBpY437AUMtt8tBIgurICw4FkmeRipIibDDqrgdKv2wzjYFnvmumNzcE9HL0A2Gbmf7eIIDIOKcluIHXFaR0krdGhGho0EJ+WagJHVzXi5BERUKrULptY32aVWL5q1CS258sMCqreKtKJkOHt1hbsENMG0csngb4ELFYV/yottG2dHUTl0Fa1HGLpQmUD3dKScra/xBc82i347UOcqI3QQFlqMgtgbrhFbEl0+KnAiN1bi97RnzpUPIFF1tX7lfH50TjaIkbpvXLuFXqCkDS44aNnmWZGlDf7GicjHRCkh1hgYQuKa+Zx5aI7mHl2lXu3w/icZejyq/NfCBgLhCIFqVkLgcRyKM9bQ9g3LaPhNIZnZR1KnjxxK5z7QUeIW63v2ubtTU152KmDDWgBeolLEpXjnYzPo23J3bgMKmyQpuuWrgZMY0nw3Jn9RSmKt8PPt3fLjLegxvm5SkSt0I/D4YV1XfnIfhO9LLJnfwqGI//k/UPwyoh1Vf9OOwaFj9Fa2/eiIWIA3YwdDxeRgy5TMFo3FScMd0TWCatEH5bpIvRZrEPhZPUcm3nQ84kb1ogg7ubLQMPDeHgehwyAsue8ifcQlDawHfo4TkGI7eIOE0ng/11aprJTtqi0QJHPCL+p0euG071wM96D1+xfv8Ns/vi4d8/xOqY4dk
