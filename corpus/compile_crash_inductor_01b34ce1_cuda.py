# fuzzcomp-corpus: status=open torch>=2.11.0 bucket=compile-crash-inductor-01b34ce1 dedup=compile-crash-inductor-01b34ce1:torch.cummax symptom=compile-crash device=cuda issue=none
"""[Fuzzer][Compile Crash] torch.compile (inductor, cuda) fails to compile: compiled raised InductorError: CompilationError: at 25:16:

Found by fuzzcomp (seed 31000187); bucket compile-crash-inductor-01b34ce1.

Exit 1 while the bug shows, 0 once it is fixed. Needs a CUDA device (exit 3 without).
"""
import traceback

import torch

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(x0):
    v1 = torch.cummax(x0, 0).values
    return (v1,)


def inputs(call):
    if call == 0:
        x0 = torch.tensor([-1, -5], dtype=torch.int16).to('cuda')  # int16 (2,), strides (1,)
        return [x0]
    x0 = torch.tensor([-1, 5, 2], dtype=torch.int16).to('cuda')  # int16 (3,), strides (1,)
    return [x0]


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
