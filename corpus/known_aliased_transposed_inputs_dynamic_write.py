# fuzzcomp-corpus: status=open torch>=2.11 bucket=known-aliased-transposed-inputs-dynamic-write dedup=known:aliased-transposed-inputs-dynamic-write symptom=mutation device=cpu issue=none
"""[Known] An input and its transposed alias passed as two arguments, the input written in place, dynamic shapes: the write lands on the wrong elements (aot_eager)

Registry entry aliased-transposed-inputs-dynamic-write; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x, y):
    x.neg_()
    return (y + 1,)


def written_input(f):
    c = torch.arange(120.0).reshape(2, 3, 5, 4)  # float32 (2, 3, 5, 4), strides (60, 20, 4, 1), a view of the 1-D arange
    f(c, c.transpose(-1, -2))  # y is a transposed view of x
    return c


# backend aot_eager: the bug is AOTAutograd's (inductor fails to compile this graph instead)
ref, res = written_input(fn), written_input(torch.compile(fn, backend="aot_eager", dynamic=True))
if not torch.equal(ref, res):  # neg_ is exact
    print(f"BUG: the written input differs from eager at {(ref != res).sum().item()} of {ref.numel()} elements")
    raise SystemExit(1)
print("OK: the written input matches eager")
