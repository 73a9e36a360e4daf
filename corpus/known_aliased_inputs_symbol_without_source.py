# fuzzcomp-corpus: status=open torch>=2.11 bucket=runtime-crash-inductor-f28d9968 dedup=known:aliased-inputs-symbol-without-source symptom=runtime-crash device=cpu issue=none
"""[Known] Two inputs, one a view of the other, with sizes that change: 'sources must not be empty for symbol' (or an IndexError in Dynamo)

Registry entry aliased-inputs-symbol-without-source; not reported upstream (class of issues/93419).
Exit 1 while the bug shows, 0 once it is fixed.
"""
import os
import sys

if os.environ.get("PYTHONHASHSEED") != "2":  # the bug shows under some string-hash orders only (2 and 3 do)
    os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)], {**os.environ, "PYTHONHASHSEED": "2"})

import torch
import torch._functorch.config
import torch._inductor.config

torch._inductor.config.fx_graph_cache = False  # a cache hit skips the pass that adds the guard
torch._functorch.config.enable_autograd_cache = False


def fn(x1, x2):
    x1[::2].mul_(2)
    return (x2 + 1,)


def inputs():
    x1 = torch.ones(6, 8)  # float32 (6, 8), strides (8, 1)
    torch._dynamo.maybe_mark_dynamic(x1, 1)
    return x1, x1.transpose(-1, -2)  # x2 is a transposed view of x1


fn(*inputs())  # eager is fine
compiled = torch.compile(fn, dynamic=True)
try:
    compiled(*inputs())
except Exception as e:
    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]
    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")
    raise SystemExit(1)
print("OK: compiled call ran")
