# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-cond-branch-stride-order-size-one-dims dedup=known:cond-branch-stride-order-size-one-dims symptom=compile-crash device=cpu issue=none
"""[Known] torch.cond forward, dynamic shapes: branches whose outputs differ only in size-1-dim strides raise 'The sorted order of strides of the two branches' output doesn't match'

Registry entry cond-branch-stride-order-size-one-dims; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x0, x1):
    return torch.cond(x0.shape[0] > 17, lambda v: torch.sigmoid(torch.sin(v)), lambda v: torch.tanh(v) * 0.5, (x1,))


def inputs(s):
    g = torch.Generator().manual_seed(s)
    x1 = torch.randn(s, 1, 1, s, generator=g).transpose(-1, -2)  # float32 (s, 1, s, 1), strides (s, s, 1, s)
    torch._dynamo.maybe_mark_dynamic(x1, 2)
    return torch.randn(s, 1, s, generator=g), x1


compiled = torch.compile(fn, backend="eager")
for s in (17, 65):  # the second size recompiles with dynamic shapes
    fn(*inputs(s))  # eager is fine
    try:
        compiled(*inputs(s))
    except Exception as e:
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()] + [""]
        why = [ln[ln.find("The sorted order"):] for ln in lines if "The sorted order" in ln] or lines  # the wrapped error
        print(f"BUG: size {s}: compiled call raised {type(e).__name__}: {why[0][:200]}")
        raise SystemExit(1)
print("OK: compiled call succeeded")
