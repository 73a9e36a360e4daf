# fuzzcomp-corpus: status=open torch>=2.11 bucket=mutation-autograd-7c72f0d3 dedup=known:grad-mode-set-inside symptom=mutation device=cpu issue=none
"""[Known] Grad mode set inside the compiled function: the global grad mode after the call differs from eager

Registry entry grad-mode-set-inside; not reported upstream (the 2023 form was issues/112072).
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x0, x1):
    x0.mul_(2)
    torch.set_grad_enabled(False)
    return (x1 + 1,)


def grad_mode_after(f):
    torch.set_grad_enabled(True)
    x0 = torch.arange(9, dtype=torch.float32).view(3, 3)  # float32 (3, 3), strides (3, 1)
    f(x0, x0.t())  # x1 is a transposed view of x0: AOTAutograd's synthetic-base path
    return torch.is_grad_enabled()


eager, compiled = grad_mode_after(fn), grad_mode_after(torch.compile(fn, dynamic=False))
if eager != compiled:
    print(f"BUG: grad mode after the call: eager {eager}, compiled {compiled}")
    raise SystemExit(1)
print("OK: the grad mode after the call matches eager")
