"""[Fuzzer][Eager/Compile Divergence] torch.compile (perturb_add, cpu) returns wrong values: output[0]: rmse vs fp64: compiled 0.00142 > 3 x eager 4.27e-08 + 6.8e-07; max abs diff 0.00142; first at [] ...

Found by fuzzcomp 0.0-golden (seed 4) on torch 2.x-golden; bucket numeric-backend-f5459b33.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
from torch._dynamo.utils import same
from fuzzcomp.planted import perturb_add as planted_backend  # the custom backend under test

torch.set_num_threads(1)  # a parallel sum adds in another order


def cond_true0(v6, v7):
    v8 = v6 * 0.5 + v7 * 0.5
    v9 = v8 * 0.5
    return v9


def cond_false0(v10, v11):
    v12 = torch.tanh(v10)
    v13 = torch.sigmoid(v12)
    return v13


def fn(m_buf0):
    v0 = m_buf0.clone()
    v0 = v0 * 0.5 + torch.tanh(v0) * 0.5
    v15 = v0.clone()
    return (v15,)


def inputs(fp64=False):
    def up(t):  # the fp64 reference runs on the same values in float64
        return t.double() if fp64 else t

    m_buf0 = up(torch.tensor(1.880212, dtype=torch.float32)).requires_grad_()  # float32 (), strides (), requires grad
    return [m_buf0]


compiled = torch.compile(fn, backend=planted_backend)
ref, fp64, res = fn(*inputs()), fn(*inputs(fp64=True)), compiled(*inputs())
if not same(ref, res, fp64_ref=fp64, equal_nan=True):
    print(f"BUG: compiled output differs from eager beyond the fp64 reference's error")
    raise SystemExit(1)
print("OK: compiled matches eager")
# fuzzcomp-case: eNrNVttu00AQ/RXLTy2gyGkpLXlDSEi8IegbqqzNepysut5d9hJIo/w7M+tLto3TSjRFfYpz5qI5Z8bj2eSlz2dZ/pk5yN9lOWdSOgQ2iAcjAR9/bgYfKXsfsA+cbrZoWUg9Z3vxrcmyqmx0RUj8Q5mEqsGC4lAKZYKnwBrjAU0Ns7ejiSz8CsKCK2OSWaaClAg7rIrZ0QgHQI4FPYo72PfZRjeuGyMiNBBukR8GOFU7Z/wWFKXK63B3R/4TI5nyUM0MWB/svGRVJMa1qsVirJgKVoJHEbgJ5FqtFWsE3zGp8Qe5mWWqRisceUQxQYFlXttyBdYJrShfMbmifMZqjG4SGt86hCjoan2gu5+cEwtFTswuDo3Ad6jJAyuOFJpyHuoib/XThiCptZkJJTz56RCjVgX98dCgWj4GborthEut4OQ0mtYm1f0alNP2mkASqLPmtdTMn58R5pZsiEj6iGU8hw7WmWQYMT7kyZm166eIZm+yYnKRvc2wX3w58UwtTzbT7WmLvzL6CcO5ZYovZ0OrUp7Ti//V0af2yhIkvnuHGH4Jint6P44/+6sPjw3L5T0pcR1Us0b8SSW8emxUcD5e33hc7XMaak6ZfTzI7PiT0RdH1ZTeBohvoALn487v96dhuADHePbP1M53zy/qptN4l/byOGm7T58Lstc46eZLTvm02O/6bpHd2wlnD/ueLrxi+6o2PRZ7gBYma7So7jE7H2fWuR6f3P5ox0H+59meFi8z3NPpy0w3Ct5iw1k41tOvZIx9l4K5UtcEttdXUL67+G5Fe7H5WB1ZJVt3jUVlvVgEHdzIUTNyavaKOzwIBZMJcqzOo2Ul4Hck0iqAl1+QsLsO+ypr1U1oOTCMeVpwRLX40W7v4XUz1yNf0+RWfr/9C0U+rQk=
