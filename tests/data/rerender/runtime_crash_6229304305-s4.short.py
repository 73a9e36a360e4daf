"""[Fuzzer][Runtime Crash] torch.compile (runtime_crash, cpu) raises at run time: compiled raised RuntimeError: planted fault: compiled kernel failed at run time

Found by fuzzcomp 0.0-golden (seed 4) on torch 2.x-golden; bucket runtime-crash-backend-50ae4741.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import traceback

import torch
from fuzzcomp.planted import runtime_crash as planted_backend  # the custom backend under test


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
# fuzzcomp-case: eNrdVk1v2zAM/SuGT+1WBHa7rlluw4ABuw1bb0NhKDIdC5ElTx/ZkiD/faT8ETdx0GFLgGGnKOQTwfdImdzGmYtnUfyBWYhvopgzKS0atmj3tQQ8ftv2GCk7DJgD0NMOPQup5+zofuMyLM8qnZMl/KFIQhVgQHHIhKq9o4sF3gd0VcwsRwMZ+O6FAZuFILNIeSnRbDErZkZvWAACJnQUGzjGIOg/4Zie5hhgXFe1CKaecGP5WgOnbOeML0FRqLjwmw3hJ7VkykE+M145UUHGDbNlEEmrQizG0slhJXiQgdeeoPlasUrwPZcCf5BdXQ71aKQjRJATFBjmtMlWYKzQiuIlkynFq43G29WAyOfWQiR0vj7Rw++tFQtFIGYWpxr9CxSEwIwDhSqb+yKJGwV1Taa5YYqXs22ym3CpVXg62ofLq/Se/jmoUDcXAvSwq+vgWtfDCjyCsto8kpGEar1xITVzd7dksyXrbwwqunupH0uQNZhTLD96xR2pen7FVm/jwZs6dD48kxKbKJ9V4udQwumIgtGrKJncR6+jbdqez6rlPt0/Ijw95tTnPGT27iSz83dGlxxlkznjIQkvh+ErGaPVnal6N3+fw1Mr6T7sw3nCtl9I62Un6aB4l2zqNDkuMn6deDlxTJXPPgG3h2Xe466w4tf/UutisidoYbBKi/wZs7txZi30/OSOOzlMi99t5TS5TC+n6WWaGfVtbP2yMFbCT+QMZZaC2UwXZGwmMs7odtdZimaOu5AdeSVbt3VEIZ1YeO3tyKAbWUC6CW1xTRBMDiznKjR6VgJ+BCKNArgNeAn7jaHLslBtQ2Y9wxCnMY6oFkZysyWtq7mWowtgt0G92f0Cd9Rl3w==
