# fuzzcomp-corpus: status=open torch>=2.11 bucket=mutation-autograd-d042478a dedup=known:default-dtype-set-inside symptom=mutation device=cpu issue=none
"""[Known] set_default_dtype inside the compiled function: the default dtype after the call differs from eager

Registry entry default-dtype-set-inside; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    torch.set_default_dtype(torch.float64)
    return x + 1


def default_dtype_after(f):
    torch.set_default_dtype(torch.float32)
    f(torch.ones(2))  # float32 (2,)
    return torch.get_default_dtype()


eager, compiled = default_dtype_after(fn), default_dtype_after(torch.compile(fn))
if eager != compiled:
    print(f"BUG: default dtype after the call: eager {eager}, compiled {compiled}")
    raise SystemExit(1)
print("OK: the default dtype after the call matches eager")
