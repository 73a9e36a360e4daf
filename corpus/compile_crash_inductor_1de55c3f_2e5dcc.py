# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=compile-crash-inductor-1de55c3f dedup=compile-crash-inductor-1de55c3f:Tensor.abs_+torch.true_divide symptom=compile-crash device=cpu issue=none
"""[Fuzzer][Compile Crash] torch.compile (inductor, cpu) fails to compile: compiled raised InductorError: TypeError: mul expected 2 arguments, got 3

Found by fuzzcomp (seed 1000053); bucket compile-crash-inductor-1de55c3f.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch


def fn(x0, x1):
    v0 = torch.true_divide(x1, torch.abs(x0) + 0.5)
    x1.select(0, -1).abs_()
    return (v0,)


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
