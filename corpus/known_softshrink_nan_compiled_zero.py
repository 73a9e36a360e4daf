# fuzzcomp-corpus: status=open torch>=2.11 bucket=numeric-autograd-23466d32 dedup=known:softshrink-nan-compiled-zero symptom=numeric device=cpu issue=none
"""[Known] softshrink(NaN) is 0.0 compiled, NaN in eager (forward and gradient)

Registry entry softshrink-nan-compiled-zero; not reported upstream.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


def fn(x):
    return F.softshrink(x, 0.5)


x = torch.tensor([0.0, float("nan"), 2.0, float("-inf")])  # float32 (4,)
ref, res = fn(x), torch.compile(fn)(x)
if not torch.equal(ref.isnan(), res.isnan()):  # the point is NaN propagation (same() skips NaN references)
    print(f"BUG: softshrink compiled {res.tolist()}, eager {ref.tolist()}: NaN is lost")
    raise SystemExit(1)
print("OK: compiled propagates NaN as eager does")
