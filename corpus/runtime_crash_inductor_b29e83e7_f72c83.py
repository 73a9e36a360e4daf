# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=runtime-crash-inductor-b29e83e7 dedup=runtime-crash-inductor-b29e83e7:Tensor.clamp_+cond:mix+torch.cond symptom=runtime-crash device=cpu issue=none
"""[Fuzzer][Runtime Crash] torch.compile (inductor, cpu) raises at run time: compiled raised AssertionError: expected size 8==8, stride 1==7 at dim=0; expected size 7==7, stride 8==1 at dim=1

Found by fuzzcomp 0.1.0 (seed 1301003994) on torch 2.13.0+cpu; bucket runtime-crash-inductor-b29e83e7.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch


def cond_true0(v1, v2):
    v3 = v1 * 0.5 + v2 * 0.5
    return v3


def cond_false0(v4, v5):
    v6 = v4 * 0.5 + v5 * 0.5
    v7 = v6 * 0.5 + v5 * 0.5
    return v7


def fn(x0, x2):
    v8 = torch.cond((x2 > -0.5).any(), cond_true0, cond_false0, (x0, x0))
    v8.transpose(-1, -2).clamp_(-3, 3)
    return (v8,)


def inputs():
    x0 = (torch.rand((8, 7), generator=torch.Generator().manual_seed(65889663186), dtype=torch.float64) * 4 - 2).float().requires_grad_()  # float32 (8, 7), strides (7, 1), requires grad
    x2 = torch.tensor([0.46082726, 0.8787613, -0.80760777, -0.5173418, 1.4638796, 0.33185747, 1.7821627], dtype=torch.float32).requires_grad_()  # float32 (7,), strides (1,), requires grad
    return [x0, x2]


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
# fuzzcomp-case: eNrNVslu2zAQ/RVBp6S1DS12nORWtCjQQ9GizS0IBEaiHCIUyXJx4xr+985QlKw4TrrFSC+2Oet7M0Nz1nFh4/MofksMjUdRXBLODQjWIHeKU/h5ue5tOO9sqN4xutqAZsHlNXng36o0qYpGVijxB4zERE01FSUtmFDOomMN/hRUDdG3ewNp+s0xTU3hg5xHwnEOYgOoiN7rYShFwyzNZtN5niQnKGM/6K7xfBSdXm023qeUjWJe3LNvJV8VLRH6NSlvqcC4wKJypZXa10aKmi32oajokpWefakcmlYrQRpWbinU8AWk1M2wDG3F0MJXkQqqCeQqllQbJgXGSyanGE9pCd7NAPLnIEG4slo91lYpqk8KjXzSovZBgUhVeEGCKqkgr6h2SxbfeS18eo7S+YjLgMeXvUvzjliCqVB1y9rKEbHC45Jwh+HGyWTmjzhc8V0WY0yr3T1MePZJ7UoN+3NBhZH6AoVY3KCNay6JzTOUmRvSe/QETOpVSGAD6bpoH50l1kcievHYhfhCa7SANtJAux0eqbaAJiUnjSo8YAhFBwWytFEcs4BknWwmFipslDT0aJyOonF2HHyPxvkoyo9D8Cfu2A3l0KbH0L53orQ4Mk+Pwxtj2EL8IfM0HtRuV5ndKws28bxhd/FgXvI95YheRTAO0etonYbfB2q6x9aBvT9iisD12VeDPtISIz0jmqtQx22C7LkThH9R43hX/EHvDjkk06eGZPbLITl5ySHZAv8r6if/Rn3+f92P7bPwGxdkeugLMjv0BZmH/vQ7yr6Of0ClnwrOiClkjcJ2I3ACLZLBu2c9TNRysgpNhspatnDSmeFwtO/r7s7TbQcGlhFG+EDy/P3HB5nR757OYIgPxTd7Eb4PmfqOw/blON1uaB3KWoTbWfQMfaxWuGdK8MVvd9FVcy0fvN4IAJVpgBE21jRP0iTJz86mm5/MYHkN
