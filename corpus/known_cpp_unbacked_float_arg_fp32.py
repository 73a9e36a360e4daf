# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-inductor-85f7c31c dedup=known:cpp-unbacked-float-arg-fp32 symptom=numeric device=cpu issue=none
"""[Known] Inductor: a float64 .item() (unbacked SymFloat) reaches a kernel as a 32-bit float: the value is rounded to float32 (C++ kernels on every version tested; Triton kernels on torch 2.11)

Registry entry cpp-unbacked-float-arg-fp32; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch

torch._dynamo.config.capture_scalar_outputs = True


def fn(x):
    return x.sum().item()  # a float64 unbacked SymFloat computed by a kernel


x = torch.tensor([1.8802120072262123, 0.0], dtype=torch.float64)  # float64 (2,): the sum is exact
ref, res = fn(x), torch.compile(fn)(x)
if ref != res:  # exact: eager's sum of a value and 0.0 is that value; compiled rounds it to float32
    print(f"BUG: float64 .item(): compiled {res!r}, eager {ref!r} (float32 of it: {float(torch.tensor(ref, dtype=torch.float32))!r})")
    raise SystemExit(1)
print("OK: compiled .item() keeps float64 precision")
