# fuzzcomp-corpus: status=open torch>=2.11 bucket=runtime-crash-inductor-9a4f347a dedup=known:inductor-clone-output-is-saved-tensor symptom=runtime-crash device=cpu issue=none
"""[Known] An output that is a clone of a tensor saved for backward (softmax(x).clone()) comes back as the saved tensor itself: a caller's in-place write to the output makes backward raise 'output N of CompiledFunction ... is at version 1'

Registry entry inductor-clone-output-is-saved-tensor; not reported upstream.
Exit 1 while the bug shows, 0 once it is fixed.
"""
import torch


def fn(x):
    return (torch.softmax(x * 2, 0).clone(),)


def run(f):
    x = torch.randn(8, generator=torch.Generator().manual_seed(0), requires_grad=True)  # float32 (8,)
    (out,) = f(x)
    loss = out.sum()
    out.sigmoid_()  # the caller writes into its own fresh output: legal, eager's softmax saved another tensor
    loss.backward()


run(fn)  # eager is fine
compiled = torch.compile(fn)
try:
    run(compiled)
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call's backward raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call and its backward ran")
