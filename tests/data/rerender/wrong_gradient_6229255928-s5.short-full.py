"""[Fuzzer][Eager/Compile Divergence] torch.compile (wrong_gradient, cpu) leaves torch's global state different from eager: state torch globals after call: eager='grad=True deterministic=True warn_only=False default_dtype=torch.float32' ...

Found by fuzzcomp 0.0-golden (seed 5) on torch 2.x-golden; bucket mutation-autograd-c9cd7d6e.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from fuzzcomp.planted import wrong_gradient as planted_backend  # the custom backend under test


def fn(x0):
    torch.use_deterministic_algorithms(True)
    return (x0,)


def inputs():
    x0 = torch.tensor(1.880212, dtype=torch.float32).requires_grad_()  # float32 (), strides (), requires grad
    return [x0]


def state():  # the torch globals a program can change
    return (torch.is_grad_enabled(), torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_default_dtype())


def after(f, xs):  # torch's globals after a call, then reset to how they were
    start = state()
    f(*xs)
    s = state()
    torch.set_grad_enabled(start[0])
    torch.use_deterministic_algorithms(start[1], warn_only=start[2])
    torch.set_default_dtype(start[3])
    return s


compiled = torch.compile(fn, backend=planted_backend)
ref, res = after(fn, inputs()), after(compiled, inputs())
if ref != res:
    print(f"BUG: torch globals after the call (grad, deterministic, warn_only, default dtype): eager {ref}, compiled {res}")
    raise SystemExit(1)
print("OK: compiled matches eager")
# fuzzcomp-case: eNqFU02v00AM/CvVnkBCVQVCQr1y4oCERG8IRduNk1jd7C770Uda9b9jO21exFt4pybj8dRjT66qyWq/UZ91AvVuo4y2NhFwJbwEC/T447pwrH1wIP5F+nmjSm/9Ub/on0tRt83oW0bkhZXQdRDBGWjQhZK5saN+oNKo46kqFOFXwQipEZH9xhVrCU40lY7VjgTAxB0/4gVecm5CM34MKNBieEa+BzA87VGbEziWUl25XJi/DVa7DO3+KXrXy0gILsuWvOuwr83TwhmN7MGEwtR2cnpE82ymox/SCsN6IfPumCH7BAdRZx+bM8SE3rHebvuJ9UL01D2unHy7I+zCt9M/Dvy1ZJ0lBjr21VX6wLzEtH1J0LSQIY7oMGU0jba9j5iHMbFGJhEQXXmDkXaVxTZNbYbt//rfHGKBt+r2WqoGsAHqV18SVXP6hYti1KJOje8eYxpfXL6H5YTzsTO45CNXrZ58EQG6bsa++CJW6Xxi7PdOVRL6uGCiHKG2KyRPYZ23g/zRgUFOxb2qOut1/vCesTTopWOVX6qcEZ7ExLwzSkux8Jyox4SdYxky0SzuRGcGKxtjT/NXNI1HX7nC6gv7ePsDZHtgaw==
