"""[Fuzzer][Eager/Compile Divergence] torch.compile (perturb_add, cpu) returns wrong values: output[0]: rmse vs fp64: compiled 0.00188 > 3 x eager 0 + 9e-07; max abs diff 0.00188; first at [] ...

Found by fuzzcomp 0.0-golden (seed 2) on torch 2.x-golden; bucket numeric-backend-5dd4ace3.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same
from fuzzcomp.planted import perturb_add as planted_backend  # the custom backend under test

torch.set_num_threads(1)  # a parallel sum adds in another order


def fn(x2):
    v2 = x2 + 0
    return (v2,)


def inputs(fp64=False):
    def up(t):  # the fp64 reference runs on the same values in float64
        return t.double() if fp64 else t

    x2 = up(torch.tensor(1.880212, dtype=torch.float32)).requires_grad_()  # float32 (), strides (), requires grad
    return [x2]


compiled = torch.compile(fn, backend=planted_backend)
ref, fp64, res = fn(*inputs()), fn(*inputs(fp64=True)), compiled(*inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: compiled output differs from eager beyond the fp64 reference's error")
    raise SystemExit(1)
print("OK: compiled matches eager")
# fuzzcomp-case: eNqtU8tu2zAQ/BWB1xaB41wK34KcCvRQtLkVgUBTS5kwRbJ8uJEF/Xt3SUkWEgW99CRqZ3fEmVkNrI7sULEnHoB9rpjgWgcsDFhPTgMefw1Lj9ZzD/g3TS8jIq22R/5uvkCeN3VnG6rkF2JSRoIHI6BWxqVIgxLnAaGO+/MmkYffSXkIdSY5VCZpjeWAt+J+6+rzmb0+4DfvX8ZMEwBoekdHdYX3nyptwnZO5dLiQqn8dCBIwpGLMxiiYjJdr9R/5zQ3EZqDAx+TP9a8yWqFNVK1W5oauCiRnREuUWvTG94pcZMn8YGC3WltUXGTOrLDYMDzaH19AR+UNcS3u/tCfM5bnO5WMr5PFZJgm/6DyB9DUK2hJu7bj/biB0jqwBtnCa97hteZwW8qEnjhOhG6K7ZaR1jJ7DDZY1MeuOzpJUKHLsZMOOzG6lM13I8Z6N06jWcwwfpnKpJtE8qktjw+ZKZw4svEKt3xXwt7Ao35bULLsm658ZXA7JhWPNRW3kIUNpk4Ld1ZlaWJWQD1a95PFuCiRNUmm8IbXzfWf16GgPuouF5V/pdTlJ6CPzkbehbncPmShpu2+ZbSTFnWi8LMVYobvlHg5Y/su6PdyGL1t+7Hvy25djs=
