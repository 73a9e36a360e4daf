"""[Fuzzer][Compile Crash] torch.compile (crash_on_symbolic, cpu) fails to compile: compiled raised BackendCompilerFailed: NotImplementedError: planted fault: symbolic sizes are not supported

Found by fuzzcomp 0.0-golden (seed 4) on torch 2.x-golden; bucket compile-crash-backend-5673a24e.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch
from fuzzcomp.planted import crash_on_symbolic as planted_backend  # the custom backend under test


def cond_true0(v6, v7):
    v8 = v6 * 0.5 + v7 * 0.5
    v9 = v8 * 0.5
    return v9


def cond_false0(v10, v11):
    v12 = torch.tanh(v10)
    v13 = torch.sigmoid(v12)
    return v13


def fn(x0, m_buf0):
    v14 = torch.cond((x0 > 0).any(), cond_true0, cond_false0, (m_buf0, m_buf0))
    v14.lerp_(m_buf0.to(v14.dtype), 0.25)
    return (m_buf0,)


def inputs(call):
    if call == 0:
        x0 = torch.tensor([1.880212, 0.83127946], dtype=torch.float32).requires_grad_()  # float32 (2,), strides (1,), requires grad
        m_buf0 = torch.tensor(-1.7557869, dtype=torch.float32).requires_grad_()  # float32 (), strides (), requires grad
        return [x0, m_buf0]
    x0 = torch.tensor([1.3529396, -1.1991876, 0.4035084], dtype=torch.float32).requires_grad_()  # float32 (3,), strides (1,), requires grad
    m_buf0 = torch.tensor(-1.979082, dtype=torch.float32).requires_grad_()  # float32 (), strides (), requires grad
    return [x0, m_buf0]


def run(f, xs):
    out = f(*xs)
    outs = [o for o in out if isinstance(o, torch.Tensor) and o.requires_grad]
    outs += [x for x in xs if isinstance(x, torch.Tensor) and x.grad_fn is not None]  # inputs written in place
    torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])


compiled = torch.compile(fn, backend=planted_backend)
for call in range(2):  # the sizes change between calls
    run(fn, inputs(call))  # eager is fine
    try:
        run(compiled, inputs(call))
    except Exception as e:
        traceback.print_exc()
        why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
        print(f"BUG: call {call}: compiled call raised {type(e).__name__}: {why[0][:200]}")
        raise SystemExit(1)
print("OK: compiled matches eager")
# fuzzcomp-case: eNrdVttu00AQ/RXLTxSqyE5bWvKGQEg8IBD0DVXWxl4nq653l72YplH+nZn1NY5dcUkQ4in23HbOmbPxbMPEhosgfEMMDc+DMCWcGzBswe4Up/D4ddvGcN7EUD0IutuBZ8XlkhzkVy5NsqSQGVr8C1ZiIqeaipQmTChnMTGHfAquguj70UKafnNMU5P4IotAOM7BbKArokczDKUYGOEje6TDmPndDqL+E5DxBMgLAOnjUlko5m0t4sryRdEU212S9J4KrBXm7vER42eKE2Fptkg1MetEisRsiqXkzCekUuRsNdZTRkuWei5S5TA02whSQFYLKIcfgKjWfVIq/jDCc0oF1cRKnZRUGyYF1otmN1hPaQnZRQ/Mp9qCQGS2mVKyFNlHhUH+0CT3RQFIlnhDhC6p4FyRDZkMi2Tpch9RP3ms0vnKZXxZNean0Zz3lliCZ6LrnlXkErHB15JwR2t1lgQFFz5EIVa02u11hu/+WLtR/fndUmGkvkUjUlx7w5xLYi/maDNr0mZ0A+qr/oOzxPp8oldT9/8zzTECRkgbqL0SA2/NTSU6qbpGZ3CtVOJxwFm0z5qlBSjN+vxttKsin23j3czKZ2jw4M7Og2g2vzqraz9xHdeUwwyn4LxzIrWop6e18toYthK/SM3LJ5gpr/dYwdkuCvYQ9kR0M8JG8BxgXwUvAuCjej6RFn4L8M0hprbnPrJXk8iOisb30jS3f3sUgf+HMVjtBYfpnf95D3c1pV3Z6+OUrT8QxvGG0t7wTinqODocMvwvp+uZJWLdn3I8H465i8OLfPYvSReanYAFxQrJsj1kF+PI6tDjgztUcveF+gkpx9FptBzHpxEz8FvZ2l1pbITv0enHzBkxiczRWO0iTtj6a9p8aK3vDr2cbOo5ApGWrZx0pi+FB8/qcPdq9hIDCxIjvGc5ypBDgxsEQi4Z/e6B9BR9IqTdDvOX0Q6R+lnDxuc47bbCpstc1FcvaRH6OpVxRB97G1m1o5pJuuuN+XL3A/Pi+ik=
