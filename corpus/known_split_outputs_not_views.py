# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-split-outputs-not-views dedup=known:split-outputs-not-views symptom=aliasing device=cpu issue=https://github.com/pytorch/pytorch/issues/118739
"""[Known] split/chunk/unbind outputs of a graph input are not views under torch.compile

Registry entry split-outputs-not-views; upstream issue https://github.com/pytorch/pytorch/issues/118739.

Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    return torch.split(x, 2, 0)[0]


x = torch.randn(4, 3, generator=torch.Generator().manual_seed(0)).requires_grad_()  # float32 (4, 3), strides (3, 1)
ref, res = fn(x), torch.compile(fn)(x)
if (ref._base is x) != (res._base is x):
    print(f"BUG: split(x)[0] of an input requiring grad: a view of x in eager ({ref._base is x}), compiled {res._base is x}")
    raise SystemExit(1)
print("OK: compiled split output is a view of the input, as in eager")
