# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=compile-crash-inductor-e251051f dedup=compile-crash-inductor-e251051f:Tensor.add_+Tensor.permute+torch.mul symptom=compile-crash device=cpu issue=none
"""[Fuzzer][Compile Crash] torch.compile (inductor, cpu) fails to compile: compiled raised BackendCompilerFailed: RuntimeError: s0*s65**2 (<class 'torch.SymInt'>, 140509309776720)is not tracked w

Found by fuzzcomp (seed 2026006467); bucket compile-crash-inductor-e251051f.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch


def fn(x0, x1):
    v0 = torch.mul(x1, x0)
    v2 = x0.permute(1, 0, 3, 2)
    v2.add_(v0)
    return (x0,)


def inputs(call):
    if call == 0:
        x0 = (torch.rand((3, 3, 3, 3), generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 4 - 2).float()  # float32 (3, 3, 3, 3), strides (27, 9, 3, 1)
        x1 = x0.transpose(-1, -2)  # a view of x0
        return [x0, x1]
    x0 = torch.tensor([[[[1.3529396, -1.1991876], [0.4035084, -1.5609233]], [[-0.70850307, -0.37553746], [-0.60181636, 0.28671062]]], [[[-0.8743537, -1.3637731], [-1.6375393, -1.4343652]], [[-1.1528602, 1.7526572], [-1.9099221, 1.5908203]]]], dtype=torch.float32)  # float32 (2, 2, 2, 2), strides (8, 4, 2, 1)
    x1 = x0.transpose(-1, -2)  # a view of x0
    return [x0, x1]


compiled = torch.compile(fn)
for call in range(2):  # the sizes change between calls
    fn(*inputs(call))  # eager is fine
    try:
        compiled(*inputs(call))
    except Exception as e:
        traceback.print_exc()
        why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
        print(f"BUG: call {call}: compiled call raised {type(e).__name__}: {why[0][:200]}")
        raise SystemExit(1)
print("OK: compiled matches eager")
