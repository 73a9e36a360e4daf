# fuzzcomp-corpus: status=open torch>=2.11 bucket=mutation-autograd-c9cd7d6e dedup=known:deterministic-set-inside symptom=mutation device=cpu issue=none
"""[Known] use_deterministic_algorithms toggled inside the compiled function: the global flag after the call differs

Registry entry deterministic-set-inside; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    torch.use_deterministic_algorithms(True)
    return x + 1


def flag_after(f):
    torch.use_deterministic_algorithms(False)
    f(torch.ones(3))
    return torch.are_deterministic_algorithms_enabled()


ref, res = flag_after(fn), flag_after(torch.compile(fn))
if ref != res:
    print(f"BUG: use_deterministic_algorithms(True) inside fn: flag after the call is {res} compiled, {ref} in eager")
    raise SystemExit(1)
print("OK: the global flag after the compiled call matches eager")
