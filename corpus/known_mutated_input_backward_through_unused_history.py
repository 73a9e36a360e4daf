# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-mutated-input-backward-through-unused-history dedup=known:mutated-input-backward-through-unused-history symptom=runtime-crash device=cpu issue=none
"""[Known] A non-leaf input that requires grad, written in place inside the compiled region, whose earlier history saved it (exp output): compiled raises 'modified by an inplace operation' although no output depends on it (eager's backward never goes there)

Registry entry mutated-input-backward-through-unused-history; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(v0, x1):
    v0.mul_(2)
    return torch.sin(x1)  # the output does not depend on v0


def run(f):
    x1 = torch.randn(3, generator=torch.Generator().manual_seed(0), requires_grad=True)  # float32 (3,)
    v0 = torch.exp(x1)  # ExpBackward saves its result, v0, which fn then writes
    f(v0, x1).sum().backward()


run(fn)  # eager is fine
compiled = torch.compile(fn, fullgraph=True)
try:
    run(compiled)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call's backward raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call and its backward ran")
