"""Hang findings through the minimiser and the stage ladder, with a short compile limit per probe.

Contract: ``probe_limits(phase_limits)`` gives the (compile, run) limits a hang's probes run
under: any one compilation may take ``HANG_PROBE_S`` (or the campaign's own limit when that is
shorter), so a reduction of a compile that outlived 150 s spends seconds per probe, not minutes;
a candidate that still compiles past that limit is still the hang. ``hang_stage(probe, case,
timeout_s, limits, deadline)`` runs the case on the rungs of the backend ladder below its own
backend (``ladder.rungs_for``: eager, aot_eager, aot_eager_decomp_partition for inductor)
cheapest first through ``probe`` (the campaign's ``probe_keys``, handed in) and returns
``{"stage": ..., "rungs": {...}}``: the first rung that hangs, else the own backend's stage
(``inductor``; ``backend`` for a custom one); None when the deadline passed.
"""
from __future__ import annotations

import time

from fuzzcomp.attribute.ladder import rungs_for

HANG_PROBE_S = 30.0


def probe_limits(phase_limits) -> tuple:
    compile_s, run_s = phase_limits
    return (HANG_PROBE_S if compile_s is None else min(compile_s, HANG_PROBE_S)), run_s


def hang_stage(probe, case, timeout_s: float, limits, deadline: float | None = None) -> dict | None:
    seen: dict = {}
    rungs, own = rungs_for(case)
    for backend, mode, stage in rungs:
        if deadline is not None and time.monotonic() >= deadline:
            return None
        try:
            _valid, _keys, verdicts = probe(case.with_compile(backend=backend, mode=mode), timeout_s, limits,
                                            deadline)
        except Exception as e:  # a rung the harness cannot run says nothing about the stage
            seen[backend] = [f"error: {type(e).__name__}"]
            continue
        seen[backend] = sorted({v.symptom for v in verdicts})
        if any(v.symptom == "hang" for v in verdicts):
            return {"stage": stage, "rungs": seen}
    # no rung below the case's own backend hangs: the hang is that backend's (the finding itself)
    return {"stage": own, "rungs": seen}
