"""How many compiles a call schedule may cost: a conservative model of Dynamo's guards.

Contract: ``max_compile_events(case, inputs_per_call)`` returns an upper bound on
the number of calls of the first pass that may compile anything (a "compile
event": one or more new graphs for that call; graph breaks make one call
compile several graphs, which is still one event), or None when the model
does not apply. It never under-estimates what Dynamo documents:

* every call may specialise on its exact sizes when ``dynamic=False``, and a
  call with sizes already seen must never compile again (bound: the number of
  distinct size tuples);
* with ``dynamic=True`` sizes become symbols, but Dynamo still specialises 0
  and 1, duck-sizes equal values into one symbol (so equalities matter), and
  guards every shape condition of an ``if``. Two calls share one graph when
  their inputs have the same 0/1 pattern, the same equality pattern over all
  sizes, strides and storage offsets (a superset of duck sizing, so the bound
  stays safe), and take the same branch of every size condition;
* with ``dynamic=None`` (automatic dynamic) the first compile is static and a
  recompile marks the changed dims dynamic; the bound used is the static one
  (distinct size tuples), which automatic dynamic never exceeds.

``class_key`` is exposed for tests and for the report.
"""
from __future__ import annotations

from fuzzcomp.generators.ir import Assign, Case, CondOp, If, Loop, SizeCond, While, walk_program
from fuzzcomp.generators.shapes import dim_value


def _types(case: Case) -> dict:
    types = {i.name: i.type for i in case.program.inputs}
    for s in walk_program(case.program):
        if isinstance(s, Assign):
            types[s.out] = s.type
        elif isinstance(s, If):
            for name, t in s.joins:
                types[name] = t
    return types


def _branches(case: Case, env: dict) -> tuple | None:
    """The truth value of every size condition, or None when one cannot be evaluated."""
    types = _types(case)
    out = []
    for s in walk_program(case.program):
        if isinstance(s, (While, Loop, CondOp)):
            return None  # iteration counts and traced branches guard on sizes: no class model
        if isinstance(s, If):
            if not isinstance(s.cond, SizeCond):
                return None
            t = types.get(s.cond.var)
            if t is None or not -t.rank <= s.cond.dim < t.rank:
                return None
            try:
                out.append(dim_value(t.shape[s.cond.dim], env) > s.cond.value)
            except Exception:  # an expression the model cannot evaluate: no prediction
                return None
    return tuple(out)


def _layout_numbers(inputs) -> list[int]:
    nums = []
    for x in inputs:
        if hasattr(x, "shape") and hasattr(x, "stride"):
            nums += list(x.shape) + list(x.stride()) + [x.storage_offset()]
    return nums


def class_key(case: Case, call, inputs) -> tuple | None:
    """Calls with equal keys reuse one graph under ``dynamic=True`` (None: no model)."""
    env = dict(zip(case.program.symbols, call.sizes))
    branches = _branches(case, env)
    if branches is None:
        return None
    nums = [int(n) for n in _layout_numbers(inputs)]
    first = {}
    pattern = []
    for n in nums:
        if n < 2:
            pattern.append(("const", n))
        else:
            pattern.append(("sym", first.setdefault(n, len(first))))
    dtypes = tuple(str(getattr(x, "dtype", type(x).__name__)) for x in inputs)
    return (tuple(pattern), dtypes, branches)


def _call_key(call) -> tuple:
    """Everything besides values a call can be guarded on: sizes and the call's own state
    (scalar arguments and globals are specialised, grad mode and requires_grad are guarded)."""
    return (call.sizes,) + tuple(getattr(call, f, None) for f in
                                 ("scalars", "globals", "grad_mode", "inference_inputs",
                                  "requires_grad", "marks"))


def _data_dependent(case: Case) -> bool:
    """A branch on tensor data or a scalar graph-breaks: a call taking a branch no earlier call
    took compiles the resumed code, whatever its sizes."""
    return any(isinstance(s, If) and not isinstance(s.cond, SizeCond) for s in walk_program(case.program))


def max_compile_events(case: Case, inputs_per_call: list) -> int | None:
    calls = case.calls
    if _data_dependent(case):
        return len(calls)
    # With dynamic=True the class model (``class_key``) would allow fewer compiles, but ops add
    # size guards of their own (pooling output sizes, unbind's output count, strided slices), so
    # a 30-minute Inductor campaign showed it blaming legitimate specialisations. Until the model
    # knows each op's guards, every mode gets the bound no correct Dynamo can exceed: one compile
    # per distinct call (sizes and call state). Replay stability is checked separately.
    return len({_call_key(c) for c in calls})
