# fuzzcomp-corpus: status=open torch>=2.11,<2.13 bucket=compile-crash-inductor-c5391d0d dedup=compile-crash-inductor-c5391d0d:Tensor.bool+Tensor.view[dtype] symptom=compile-crash device=cuda issue=none
"""[Fuzzer][Compile Crash] torch.compile (inductor, cuda) fails to compile: compiled raised InductorError: LoweringException: TypeError: torch.bool is not supported by torch.iinfo

Found by fuzzcomp 0.1.0 (seed 1201003878) on torch 2.11.0+cu130; bucket compile-crash-inductor-c5391d0d.

Exit 1 while the bug shows, 0 once it is fixed. Needs a CUDA device (exit 3 without).
"""
import traceback

import torch

if not torch.cuda.is_available():
    print("cannot run here: no CUDA device")
    raise SystemExit(3)


def fn(x0):
    v0 = x0.bool()
    v8 = v0.view(torch.uint8)
    return (v8,)


def inputs():
    x0 = torch.tensor(1.880212, dtype=torch.float32).to('cuda').requires_grad_()  # float32 (), strides (), requires grad
    return [x0]


def run(f, xs):
    out = f(*xs)
    outs = [o for o in out if isinstance(o, torch.Tensor) and o.requires_grad]
    torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])


compiled = torch.compile(fn)
run(fn, inputs())  # eager is fine
try:
    run(compiled, inputs())
except Exception as e:
    traceback.print_exc()
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled matches eager")
# fuzzcomp-case: eNqlVE1v2zAM/SuBTx0wBG57mNHbsNNuw9ZbURiKTDtCZEnThzcvyH8fSTmp0ardhp0SPz7SfI+kj1Ubq7tN9UkEqN5vKim0DggcEU9OA/59OF44Wp854J+RHk8YGbTdiRf5OeRF1462I4QfqJIyPXgwElplXIqU2GM+YGgU/lAs5OF7Uh5Cy0XuNiZpjXDAroQvZgQAItb0V/2Cl5wT06QdnWLoIjgj3xxI6nYn5AEMlcLGuySj9WyHNb0aSi/uYFKSBcvUCeJ2sxGjkk9t9/iDQtx+LT27RAx2Dgx4gS9rJ/BBWUMF621D9Zy3mD2uev6yINSv7eZXRvkxBDUYIgk/vDbvr9ATAztmDT/rKhtlHT3egwnWb3fW8lLYxDlTTQ8RRqdF5LRjfWLS1TuOzG7tcC5yTyC5s0Src9GwFxf6alzYxP8ImYpCJgU/HriDx7WepqSHuFc4EbnfJmVi8w/SmP+Wtj8d0h60g/KiX46oZMJnCrJRWonQ2p7AvL/JxOU+Dirvd+TmKarFvFiBex7VkGwKz7aicJTnVQ54OkroFfJ3LvXainh784ZPGKEpsIjsGZ5N0vB0WucOe7PMs72o4zoZLDhGQ88fjnnc2cIUVh+V65v6uq5vmw/N6TcLHKM0
