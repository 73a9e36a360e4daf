"""How many compiles a call schedule may cost: a bound no correct Dynamo can exceed.

Contract: ``max_compile_events(case)`` returns an upper bound on the number of
calls of the first pass that may compile anything (a "compile event": one or
more new graphs for that call; graph breaks make one call compile several
graphs, which is still one event): one per distinct call, where a call is its
sizes plus its own state (scalar arguments and globals are specialised, grad
mode and requires_grad are guarded), and one per call when a branch on data or
a scalar can send a call down code no earlier call took.

Inputs created under inference mode are part of a call's state: Dynamo's
tensor guard compares each input's dispatch key set (TENSOR_MATCH in
``torch/_dynamo/guards.py`` hands ``torch._C._dispatch_keys(value)`` to
``add_tensor_match_guard``; ``TensorCheck`` in ``csrc/dynamo/guards.h`` checks it
after the thread-local include/exclude sets). An inference tensor has no
ADInplaceOrView key, so under ``inference_mode`` it fails the guard of a
graph compiled for a normal tensor and the reverse, and torch 2.13 recompiles
("dispatch key set mismatch"), so such a call may compile once more.

The bound is the same for every ``dynamic`` setting. A finer model for
``dynamic=True`` (calls sharing a 0/1 and equality pattern reuse one graph)
blamed legitimate specialisations in a 30-minute Inductor campaign: ops add
size guards of their own (pooling output sizes, unbind's output count, strided
slices). Replay stability (a call already seen never compiles again) is
checked separately by the executor.
"""
from __future__ import annotations

from fuzzcomp.generators.ir import Case, If, SizeCond, walk_program


def _call_key(call) -> tuple:
    """Everything besides values a call can be guarded on: sizes and the call's own state
    (scalar arguments and globals are specialised, grad mode and requires_grad are guarded,
    an inference tensor's dispatch keys differ from a normal one's)."""
    return (call.sizes,) + tuple(getattr(call, f, None) for f in
                                 ("scalars", "globals", "grad_mode", "inference_inputs",
                                  "requires_grad", "marks", "caller"))


def _data_dependent(case: Case) -> bool:
    """A branch on tensor data or a scalar graph-breaks: a call taking a branch no earlier call
    took compiles the resumed code, whatever its sizes."""
    # scalars read into Python (.item(), .tolist(), data-dependent sizes) are specialised the same way
    return any(isinstance(s, If) and not isinstance(s.cond, SizeCond) or getattr(s, "op", "").startswith("dds:")
               for s in walk_program(case.program))


def max_compile_events(case: Case) -> int:
    calls = case.calls
    if _data_dependent(case):
        return len(calls)
    return len({_call_key(c) for c in calls})
