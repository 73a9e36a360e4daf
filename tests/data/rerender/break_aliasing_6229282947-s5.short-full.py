"""[Fuzzer][Eager/Compile Divergence] torch.compile (break_aliasing, cpu) changes which inputs outputs alias: alias of output tensor 0: eager='shares storage with x0' compiled='fresh'

Found by fuzzcomp 0.0-golden (seed 5) on torch 2.x-golden; bucket aliasing-backend-0891a3d8.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from fuzzcomp.planted import break_aliasing as planted_backend  # the custom backend under test


def fn(x0):
    v3 = torch.movedim(x0, 0, 0)
    return (v3,)


def inputs():
    x0 = torch.tensor(1.880212, dtype=torch.float32).requires_grad_()  # float32 (), strides (), requires grad
    return [x0]


def shared(f, xs):  # for each output, which inputs it shares storage with
    out = f(*xs)
    ptr = lambda t: t.untyped_storage().data_ptr()  # noqa: E731
    return [[ptr(o) == ptr(x) for x in xs if isinstance(x, torch.Tensor)]
            for o in out if isinstance(o, torch.Tensor)]


compiled = torch.compile(fn, backend=planted_backend)
ref, res = shared(fn, inputs()), shared(compiled, inputs())
if ref != res:
    print(f"BUG: outputs share storage with inputs: {res} compiled, {ref} in eager")
    raise SystemExit(1)
print("OK: compiled matches eager")
# fuzzcomp-case: eNqtU02P00AM/StVTiChqrsrJNQb4oTEYQV7QyhyE09qdTIzzEcgrfLfsSdpNtpm4cKlbd57du3nl0tRxmK/KT5BwOLdpqhA68DAhfHkNPLP75dZo/VVg/6F6MfATKPtAW7qR8pDXba2FiQ/SCcyCj2aCksyLkUpVFyPTLXgT6uNPP5M5DGUucl+Y5LWDAeeCvxqRUAU4U5+0hlvNUOWVbZ1lKF54RH55rCSaQ9QndBIq0Kl81n0W6fBRKz3B49wKkETBDJNdskaRc3aPDV2VGUfKpdEWvcGWqqel1H8xeu549KQ0TtRZD/RoIdofdmhD2SN9NttP0g/5y1Xt4tNHidEtrB1/8qBP4ZAjRER+Oa1FHxFJQqeOK/we1fwOFfyC0UhO9BJ2N3fqOyFdcLxGtVx29oOa8pD2pRrugd5iNiyzRFvlG8u+Q/u5ON+eJu1vVte8AlNsP5JQPF5YgulLcSHe8HCEeaKRSKGf+X5iNrhet7mLK/Z91nIbLFkpbRKwDEvycQppicaYxbz+MJq6CdPOFeRmmRTeHGGlXfjmp3ACSbQC+R/+SQXJfyVlxg945wmjc9Zvk6ozHTYct4u9xnBFcfk+uP727cHu3KFxbv9fvgDGaB9jQ==
