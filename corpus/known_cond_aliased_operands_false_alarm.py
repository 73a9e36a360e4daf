# fuzzcomp-corpus: status=open torch>=2.11 bucket=compile-crash-autograd-a1e0c655 dedup=known:cond-aliased-operands-false-alarm symptom=compile-crash device=cpu issue=none
"""[Known] torch.cond with two operands that alias each other: 'cond_true might be aliasing the input or the output!'

Registry entry cond-aliased-operands-false-alarm; not reported upstream (the while_loop twin is issues/191582).
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    # operand b is a view of operand a; neither branch returns or writes an input
    return torch.cond(x.sum() > 0, lambda a, b: a * 0.5 + b, lambda a, b: a - b, (x, x.t()))


x = torch.randn(3, 3, generator=torch.Generator().manual_seed(0))  # float32 (3, 3)

# under inference_mode eager torch.cond accepts the aliased operands (outside it, eager rejects them too)
with torch.inference_mode():
    fn(x)  # eager is fine
    compiled = torch.compile(fn)
    try:
        compiled(x)
    except Exception as e:
        why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
        print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
        raise SystemExit(1)
print("OK: compiled call ran")
