"""[Fuzzer][Runtime Crash] torch.compile (runtime_crash, cpu) raises at run time: compiled raised RuntimeError: planted fault: compiled kernel failed at run time

Found by fuzzcomp 0.0-golden (seed 4) on torch 2.x-golden; bucket runtime-crash-backend-50ae4741.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch
from fuzzcomp.planted import runtime_crash as planted_backend  # the custom backend under test


def cond_true0(v6, v7):
    v8 = v6 * 0.5 + v7 * 0.5
    v9 = v8 * 0.5
    return v9


def cond_false0(v10, v11):
    v12 = torch.tanh(v10)
    v13 = torch.sigmoid(v12)
    return v13


def fn(m_buf0):
    v15 = m_buf0.clone()
    return (v15,)


def inputs(call):
    if call == 0:
        m_buf0 = torch.tensor(1.880212, dtype=torch.float32).requires_grad_()  # float32 (), strides (), requires grad
        return [m_buf0]
    m_buf0 = torch.tensor(1.3529396, dtype=torch.float32).requires_grad_()  # float32 (), strides (), requires grad
    return [m_buf0]


def run(f, xs):
    out = f(*xs)
    outs = [o for o in out if isinstance(o, torch.Tensor) and o.requires_grad]
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
# fuzzcomp-case: eNrdVk1v2zAM/SuGT+1WBHa7rlluw4ABuw1bb0NhKDIdC5ElTx/ZkiD/faT8ETdxUKBLgGEny+QTwfdISdzGmYtnUfyJWYhvopgzKS0atmj3tQRc/tj2GCk7DJgD0NMOPQup5+xof+MyLM8qnZMl/FAkoQowoDhkQtXe0cYC9wO6KmaWo4EM/PTCgM1CkFmkvJRotpgVM6M7LAABE1qKDRxjEPSfcExPcwwwrqtaBFNPuLF8r4FTtnPGl6AoVFz4zYbwk1oy5SCfGa+cqCDjhtkyiKRVIRZj6eSwEjzIwGtP0HytWCX4nkuBH2RXl0M9GukIEeQEBYY5bbIVGCu0onjJZErxaqNxdzUg8rW1EAmdr0/08EdrxUIRiJnFqUb/BgUhMONAocrmvkjiRkFdk2lumOLlbJvsJlxqFY6O9mHzKr2nPwcV6uZCgB52dR1c63pYgUdQVptHMpJQrTcupGbu7pZstmT9jkFFdy/1YwmyBnOK5WevuCNVz6/Y6n08OFOHzodnUmIT5bNK/B5KOB1RMHoTJZP76G20Tdv1WbXcp/sqwtNjTn3OQ2YfTjI7f2d0yVE2mTMekpAyWBfuiu7U1QyPzRjPbk3lvPn7pJ5ajfdhH84Ttr0yrZedxoNqXrLL0+S46nhd8XLimCqf3Qm3h3Xf466wBa7/pV7GZE/QwmCVFvkzZnfjzFro+ckdt3Zo5Ff3dppcprnT9DLdjYI3tn6cGKvpF3KGukvBbKYLMjZvNr7i7TS0FM1L70J25JVs3RYWlXVi4bW3I0/hyIjSKW5xkBBMDiznqjx6VgJ+BSKNAjgveAn7maLLslBth2Y9wxCnMY6oFh7tZo5aV3MtR0fEbsZ6t/sDi1hwzw==
