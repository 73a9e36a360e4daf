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
# fuzzcomp-case: eNrdVttu00AQ/RXLTxSqyE5bWvKGQEg8IBD0DVXWxh4nq653zV5M0yj/zsz6msSpREkQ4inO3HbOmbP2rMPEhrMgfMcMhOdBmDIhDBrWaHelAHz8vu5ihGhjQO8E3W3QsxBqzvbya5dmWVKojCz+D1XiMgcNMoWEy9JZSswxH9BVMH0/WkjDD8c1mMQXmQXSCYFmg10xPZphACgwokf+CLsx07sNRv0nIOMDIC8QpI9LVVFyb+sQ15ZvJaTU7pyl9yCpVpi7x0eKn5SCSQvZLNXMLBMlE7Mq5kpwn5AqmfPFWE8ZVDz1XKSlo9BsJVmBWR2gHH8QYrkcklLzRxGeU5CgmVU6qUAbriTViyY3VK/UCrOLAZgvjYWAqGx1SMlKZp9LCvKHJrkvikCyxBsicqkSz5XZLpNhkcxd7iOaJ49VOV+5ii/rxvw02vPeM8voTHLd85pcJlf0t2LCQaPOipHgwocopIpWu63O6L8/1q7K4fxuQRqlb8lIFDfeMBeK2Ysp2cySdRn9gIaq/+Qssz6f6cWh+/8VcorAEUILdVBix9twU4tOlX2jE7xWZeJx4FkwZM1CgUqzPn8dberIF+t4M7HqBRk8uLPzIJpMr86a2k9cxyUInOEhOB+cTC3p6WmtvDWGL+RvUvP6CWaq6y1WaLazgj+EAxHdjLARvETYV8GrAPmon0+khWcBvtnH1PU8RPbmILKjovG9tM1t3x4JxvrL2b5vSoYvjDGc3Y3HcZ7/eVN3Dcd92evjlG2+GMaJluPBNE+p8jjanzq+qNPlxDK5HI49nu7OvY+jm332L2kZmz0AC4sVimdbyC7GkTWhxwe3L+3+k/UcbcfRacQdx6dRNxJe27ptamymH8np5y44M4nKyVhvK07a5nvbfoqt7468gq2awSKzli+ccmaojQdP8+521rJtcIXiTAwsR5l6aGjHIMgVh58eyEDiJ0Labzl/Ge0uUj9r3AmdgH5vbLvMZXMXkw6hr1MbR/SxtbPVW6w5SHezU19ufgFQiwUo
