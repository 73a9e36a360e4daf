# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=compile-crash-inductor-a2171544 dedup=compile-crash-inductor-a2171544:Tensor.index_fill_+torch.sum symptom=compile-crash device=cpu issue=none
"""[Fuzzer][Compile Crash] torch.compile (inductor, cpu) fails to compile: compiled raised BackendCompilerFailed: RuntimeError: Expected !size_bytes_is_heap_allocated_ to be true, but got false. 

Found by fuzzcomp (seed 2027007273); bucket compile-crash-inductor-a2171544.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch


def fn(x1, x3):
    x1.index_fill_(0, (torch.arange(3, device=x1.device) * 5 % x1.shape[0]), -1.5)
    v6 = x3.sum(0, keepdim=False)
    return (v6,)


def inputs():
    with torch.inference_mode():  # inference tensors
        x1 = torch.tensor([1.880212, 0.83127946], dtype=torch.float32)  # float32 (2,), strides (1,)
        x3 = x1.view(x1.shape)  # a view of x1
    return [x1, x3]


def run(f, xs):
    with torch.inference_mode():
        out = f(*xs)


compiled = torch.compile(fn, dynamic=True)
run(fn, inputs())  # eager is fine
try:
    run(compiled, inputs())
except Exception as e:
    traceback.print_exc()
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled matches eager")
