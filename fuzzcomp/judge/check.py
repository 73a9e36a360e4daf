"""The whole check of one case: execute, judge, then attribute.

Contract: ``check(case, options)`` runs what a worker performs for one case: ``observe`` (in
``fuzzcomp.run.execute``), the oracles' ``judge``, perturbed and wide-loss eager runs where they
could clear a mismatch, eager with the caller's write in its reference form where that write
made eager's backward refuse a saved tensor, the half-precision witness, then the backend ladder
and culprit op, and for a recompile finding its cause from functional twins
(``fuzzcomp.attribute.twins``).
Attribution re-runs the case, so it is handed ``check`` itself as its probe; the attribute stage
never imports this module. ``localise(case, verdict)`` re-runs a finding on the backend ladder
on request. ``eager_validity(seeds)`` runs seeds in eager alone.
"""
from __future__ import annotations

import time
import warnings

from fuzzcomp.generators import Case, generate
from fuzzcomp.oracles import Observation, caller_reference_calls, judge, needs_perturbation, notes
from fuzzcomp.oracles.verdict import Verdict

from fuzzcomp.base.symptoms import CRASHES
from fuzzcomp.attribute import ladder as _ladder
from fuzzcomp.attribute.halfwitness import half_witness
from fuzzcomp.attribute.ladder import LADDER, attribute, same_symptom  # noqa: F401  (re-exported)
from fuzzcomp.attribute.twins import name_cause
from fuzzcomp.run.execute import (DEFAULT_OPTIONS, ExecOptions, _phase, add_caller_reference, add_perturbed,
                                  add_wide_eager, audit_eager, audit_zero_signs, compile_counts, configure_torch,
                                  observe)


def check(case: Case, options: ExecOptions = DEFAULT_OPTIONS) -> tuple[Observation, list[Verdict]]:
    """Execute then judge; perturbed eager runs and the eager-kernel audit are added only when
    they could clear a mismatch (the zero-sign audit only for a flipped zero), eager with the
    wide loss only after a compiled crash, the caller-write reference only for calls whose
    caller wrote a tensor eager saved. Findings then get their stage from the backend ladder
    and value findings a culprit op (``options`` ``ladder``/``culprit``); a recompile finding
    gets its cause from functional twins where the ladder runs (``options.twins``: the
    ladder's own probes, which run without it, skip them)."""
    obs = observe(case, options=options)
    if not obs.eager_valid:  # why eager refused the program, for the event log's validity figures
        err = next(c.eager.error for c in obs.calls if c.eager.error is not None)
        obs.stats["eager_error"] = f"{err[0]}: {err[1]}"[:200]
        return obs, []
    _phase("judge")
    verdicts = judge(obs)
    overwritten = caller_reference_calls(obs)
    if overwritten and options.grad != "off":  # the caller wrote a tensor eager saved: compiled's
        add_caller_reference(case, obs, overwritten, options=options)  # grads against the no-write run
        _phase("judge")
        verdicts = judge(obs)
    crashed = [v.call for v in verdicts if v.symptom in CRASHES and v.call >= 0]
    if crashed and options.grad != "off":
        add_wide_eager(case, obs, crashed, options)
        verdicts = judge(obs)
    signs = [v.call for v in verdicts if v.oracle == "exact-special" and "zeros change sign" in v.detail]
    if signs:  # does eager's own kernel give either zero? (vector lanes against its scalar loop)
        audit_zero_signs(case, obs, signs, options)
        _phase("judge")
        verdicts = judge(obs)
    if needs_perturbation(verdicts):
        t0 = time.perf_counter()
        add_perturbed(case, obs, options=options)
        audit_eager(case, obs, [v.call for v in verdicts if v.oracle in ("fp64-rule", "cross-device")
                                and v.call >= 0], options)
        obs.timings["perturbed"] = time.perf_counter() - t0
        _phase("judge")
        verdicts = judge(obs)
    found_notes = notes(obs)
    if found_notes:
        obs.stats["notes"] = found_notes[:20]
    if verdicts:
        verdicts = half_witness(case, obs, verdicts, options, check)
    if verdicts and (options.ladder or options.culprit):
        t0 = time.perf_counter()
        verdicts = attribute(case, obs, verdicts, options, check)
        obs.timings["ladder"] = time.perf_counter() - t0
    if verdicts and options.ladder and options.twins:
        # after the ladder, whose rung names the cheapest backend the twins can run on
        t0 = time.perf_counter()
        verdicts = name_cause(case, obs, verdicts, lambda twin, grads: compile_counts(twin, grads, options))
        if "recompile_twins" in obs.stats:
            obs.timings["twins"] = time.perf_counter() - t0
    return obs, verdicts


def localise(case: Case, target: Verdict, options=None, ladder=LADDER, matches=same_symptom,
             bisect: bool = False) -> dict:
    """``attribute.ladder.localise`` with ``check`` as its probe."""
    return _ladder.localise(case, target, check, options, ladder, matches, bisect)


def bisect_inductor(case: Case, target: Verdict, options=None, matches=same_symptom) -> str:
    """``attribute.ladder.bisect_inductor`` with ``check`` as its probe."""
    return _ladder.bisect_inductor(case, target, check, options or DEFAULT_OPTIONS, matches)


def eager_validity(seeds, config=None) -> tuple[int, int, int, list]:
    """Run each seed's case in eager alone: (valid cases, calls whose fp64 run worked, calls of
    valid cases, [(seed, first eager error)] of the invalid ones). Warnings are the programs'."""
    configure_torch()
    valid = fp64_ok = calls = 0
    errors = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in seeds:
            obs = observe(generate(seed) if config is None else generate(seed, config), eager_only=True)
            if obs.eager_valid:
                valid += 1
                for rec in obs.calls:
                    calls += 1
                    fp64_ok += rec.fp64 is not None and rec.fp64.error is None
            else:
                errors.append((seed, next(c.eager.error[:2] for c in obs.calls if c.eager.error)))
    return valid, fp64_ok, calls, errors
