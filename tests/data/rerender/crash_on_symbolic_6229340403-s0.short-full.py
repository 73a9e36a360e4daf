"""[Fuzzer][Compile Crash] torch.compile (crash_on_symbolic, cpu) fails to compile: compiled raised BackendCompilerFailed: NotImplementedError: planted fault: symbolic sizes are not supported

Found by fuzzcomp 0.0-golden (seed 0) on torch 2.x-golden; bucket compile-crash-backend-5673a24e.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch
from fuzzcomp.planted import crash_on_symbolic as planted_backend  # the custom backend under test


def fn(x0):
    torch.mul(x0, x0, out=x0)
    return (x0,)


def inputs(call):
    if call == 0:
        x0 = torch.tensor([1.880212, 0.83127946, -0.16246822], dtype=torch.float32)  # float32 (3,), strides (1,)
        return [x0]
    x0 = torch.tensor([1.3529396, -1.1991876], dtype=torch.float32)  # float32 (2,), strides (1,)
    return [x0]


compiled = torch.compile(fn, backend=planted_backend)
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
# fuzzcomp-case: eNrdVE2P0zAQ/SuVTyBBlHaFQJU4ceKAhGBvqypynUlj1bGNP8qmUf47M84H2ZIiceXSOm/eTOY9z6RjRWD7DfvEPbA3Gya4Uh6BDvFoFeDxqZs5Sk0ccDekQ4+RkzJH/kf+EHK8LBpTEpIeqJLUFTjQAgqpbQyUWGE+YKjh7rxayMGPKB34IhXZb3RUCmGPXXG31vp0Zs9bfOcuyw99KuQBKD+no7zCberDoUfWf6X9bZ69f/dS/faO+h2qTzxhGisTNlsxIN8tCNJx5OIMmmqxKl6vxM+s4jpAuReO+7owuvBtczRKpgRhdCVPa/JKuEiRTBI2ErVsNW8wa1Za4R9qt/XSrcFYYiSzQYPjwbjiAs5Lo6lenn2getYZzG4WYr6OCAkxZXtn8r/EwEPaD+5O99bjG1TEwI6ThOecLebnX4PJD2PpEaWIOmuiejIxHIgYsAsII5WeoUHHA7xgv+q29Iod/mDexy7vX49l/zKpNSgLbjU0T+ma9s8UTP4oyX1hKgKHy446jFt2lsOYBNDeOIoq3mJv6cKNDvIUTfQ3TqxM/XTxHidQcrVAQmuXk/qYXvRIIA3TGGWVMjw87AjzNZ8z5l3xW5Z2n10k/ExCBt9w0KKC38M4dVlpKoVCillhqjWAK66RrmEJ01r4uw1Mn6j+F2RswlY=
