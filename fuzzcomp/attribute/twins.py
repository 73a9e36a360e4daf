"""Functional twins: what makes a recompile finding recompile.

Contract: ``name_cause(case, obs, verdicts, counts)``, for verdicts whose primary one is a
recompile, returns them with the cause of the recompiles in each recompile verdict's signature
(``recompile: KIND | cause: NAME``, so the cause is part of the BucketKey; see ``signature``)
and its detail (what each twin did); any other verdict list comes back unchanged.
``counts(case, grad_names)`` is the probe (``fuzzcomp.run.execute.compile_counts``, handed
in): the compile figures of one compiled pass and its replay, None when a call raised.
``obs.stats["recompile_twins"]`` records the twins run.

A twin is the same program and schedule compiled again with one feature removed (``TWINS``,
narrowest first): inputs created normally instead of under inference mode; one requires_grad
set for every call; no dynamic marks; the first call's scalar arguments for every call; the
first call's globals, no caller actions and no program writes of torch's global state; every
call in grad mode; in-place writes replaced by out-of-place forms (``outofplace``). Twins run
in order, only those that change the case, each judged by the same recompile oracle as the
case (``judge_recompiles``), and stop at the first one that shows none of the case's recompile
kinds (replay compiles again, more compiles than predicted, limit hit): that feature is the
cause of them all (one fault usually shows as several kinds at once). When none does alone,
all of them together are tried: cause ``combined:A+B``; when even that recompiles, the cause
is ``program`` (the program and its sizes recompile by themselves). A twin whose compiled run
raises says nothing and is skipped.

They run on the cheapest backend that shows the finding: the ladder's rung (eager for a
capture-stage recompile), checked once there (the control); a control that loses the verdict
sends the twins to the case's own backend, whose first run is the control. Twins cost a
compiled pass and replay each, without eager runs, and run only for a recompile verdict about
to be filed (the caller gates them like the ladder).
"""
from __future__ import annotations

import dataclasses

from fuzzcomp.generators import Case
from fuzzcomp.oracles import Observation, Verdict, primary
from fuzzcomp.oracles.judge import judge_recompiles

from fuzzcomp.attribute.ladder import stage_backend
from fuzzcomp.attribute.outofplace import out_of_place
from fuzzcomp.generators.ir import Mutate

_STATE_WRITES = ("state:set_grad_enabled", "state:use_deterministic_algorithms", "state:set_default_dtype")


def _calls(case: Case, **changes) -> Case:
    return dataclasses.replace(case, calls=tuple(dataclasses.replace(c, **changes) for c in case.calls))


def _first(case: Case, field: str) -> Case:
    return _calls(case, **{field: getattr(case.calls[0], field)})


def _no_state_writes(program):
    def body(stmts):
        out = []
        for s in stmts:
            if isinstance(s, Mutate) and s.op in _STATE_WRITES:
                continue
            kids = {f: body(getattr(s, f)) for f in ("then", "orelse", "body") if hasattr(s, f)}
            out.append(dataclasses.replace(s, **kids) if kids else s)
        return tuple(out)
    fn = lambda f: None if f is None else dataclasses.replace(f, body=body(f.body))  # noqa: E731
    return dataclasses.replace(program, body=body(program.body), helpers=tuple(fn(f) for f in program.helpers))


def _globals(case: Case) -> Case:
    case = _calls(_first(case, "globals"), caller=())
    return dataclasses.replace(case, program=_no_state_writes(case.program))


def _in_place(case: Case) -> Case:
    program = out_of_place(case.program)
    return case if program is None else dataclasses.replace(case, program=program)


#: (cause, what the twin removes, Case -> twin); a twin equal to the case does not apply
TWINS = (
    ("inference-inputs", "inputs created normally, not under inference mode",
     lambda c: _calls(c, inference_inputs=False)),
    ("requires-grad", "one requires_grad set for every call", lambda c: _first(c, "requires_grad")),
    ("marks", "no mark_dynamic", lambda c: _calls(c, marks=())),
    ("scalars", "the first call's scalar arguments in every call", lambda c: _first(c, "scalars")),
    ("globals", "the first call's globals, no caller actions, no writes of torch globals", _globals),
    ("grad-mode", "every call in grad mode", lambda c: _calls(c, grad_mode="grad", inference_inputs=False)),
    ("in-place", "in-place writes replaced by out-of-place forms", _in_place),
)


def kind_of(v: Verdict) -> str:
    """What a recompile verdict says happened: its signature's second part."""
    parts = v.signature.split(": ")
    return parts[1] if len(parts) > 1 else v.signature


def _shows(stats: dict | None, kinds) -> bool | None:
    """Whether compile figures show a recompile of one of ``kinds`` (None: the run raised)."""
    if stats is None:
        return None
    return any(kind_of(v) in kinds for v in judge_recompiles(stats))


def _backend(case: Case, obs: Observation) -> str:
    stage = (obs.stats.get("ladder") or {}).get("stage")
    return stage_backend(stage) or case.compile.backend


def twin_runs(case: Case, kinds, probe) -> tuple[str, dict]:
    """(cause, {twin: "stops" | "recompiles" | "raised"}) for a case showing recompiles of
    ``kinds``; ``probe(twin) -> stats or None``."""
    seen, applied = {}, []
    for name, _, make in TWINS:
        twin = make(case)
        if twin == case:
            continue
        applied.append(make)
        shows = _shows(probe(twin), kinds)
        seen[name] = "raised" if shows is None else "recompiles" if shows else "stops"
        if shows is False:
            return name, seen
    if len(applied) > 1:
        twin = case
        for make in applied:
            twin = make(twin)
        shows = _shows(probe(twin), kinds)
        seen["combined"] = "raised" if shows is None else "recompiles" if shows else "stops"
        if shows is False:
            return "combined:" + "+".join(n for n, s in seen.items() if n != "combined"), seen
    return "program", seen


def signature(v: Verdict, cause: str) -> str:
    """The verdict's signature with its cause. A named cause replaces the first guard-failure
    reason: that reason belongs to whichever cache entry Dynamo tried first (a grad-mode entry, a
    dispatch-key one), so one cause would spread over several buckets; the twin that stops the
    recompile is the identity. With cause ``program`` the reason is all there is, and stays."""
    if cause == "program":
        return f"{v.signature} | cause: program"
    return f"recompile: {kind_of(v)} | cause: {cause}"


def name_cause(case: Case, obs: Observation, verdicts: list[Verdict], counts) -> list[Verdict]:
    target = primary(verdicts) if verdicts else None
    if target is None or target.symptom != "recompile":
        return verdicts
    kinds = {kind_of(v) for v in verdicts if v.symptom == "recompile"}
    grads = tuple(obs.stats.get("grad_inputs") or ())
    backend = _backend(case, obs)
    if backend != case.compile.backend and not _shows(counts(case.with_compile(backend=backend, mode=None), grads),
                                                        kinds):
        backend = case.compile.backend  # the cheap rung shows none of them: the case's own
    spec = {} if backend == case.compile.backend else {"backend": backend, "mode": None}
    cause, seen = twin_runs(case, kinds, lambda twin: counts(twin.with_compile(**spec), grads))
    obs.stats["recompile_twins"] = {"backend": backend, "cause": cause, "twins": seen}
    said = "; ".join(f"without {n}: {s}" for n, s in seen.items()) or "no twin applies"
    out = []
    for v in verdicts:
        if v.symptom == "recompile":
            v = dataclasses.replace(v, signature=signature(v, cause),
                                    detail=f"{v.detail}; functional twins on {backend}: {said}; cause: {cause}")
        out.append(v)
    return out
