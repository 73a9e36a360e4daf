"""The reducer: shrink a failing Case while it keeps its BucketKey.

Contract: ``minimise(case, is_interesting, budget_s)`` runs the tiers of
``passes.TIERS`` until a whole round makes no progress or the budget is spent,
and returns the smallest interesting case found plus per-pass statistics. A
candidate is accepted only if it is smaller by ``passes.size_of``, still
type-checks (``typecheck.retype``, a meta-tensor run costing milliseconds,
so ill-typed candidates never cost a probe) and ``is_interesting`` holds
(same bucket, eager still valid). After each accepted candidate the same pass
starts again from its biggest cut. ``should_stop`` ends it early (Ctrl-C)
with the best case so far. A pass that makes no progress, or that raises on a
statement kind it does not know, is reported in the stats, never looped on.
When the original program does not type-check on meta tensors (an op the
meta device lacks), candidates go straight to the probe instead.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable

from fuzzcomp.generators.ir import Case

from fuzzcomp.reduce.ir_edits import drop_dead_helpers
from fuzzcomp.reduce.passes import TIERS, size_of
from fuzzcomp.reduce.typecheck import retype


@dataclass
class ReduceStats:
    probes: int = 0
    accepted: int = 0
    ill_typed: int = 0       # candidates the meta type check threw away before any probe
    seconds: float = 0.0
    out_of_time: bool = False
    typed: bool = True       # False when the original did not type-check on meta tensors
    per_pass: dict = field(default_factory=dict)  # name -> [probes, accepted]
    errors: dict = field(default_factory=dict)    # name -> "Type: message" of a pass that raised

    def to_json(self) -> dict:
        return {"probes": self.probes, "accepted": self.accepted, "ill_typed": self.ill_typed,
                "seconds": round(self.seconds, 2), "out_of_time": self.out_of_time,
                "typed": self.typed, "per_pass": self.per_pass, "errors": self.errors}


def minimise(case: Case, is_interesting: Callable[[Case], bool], budget_s: float = 120.0,
             on_progress: Callable[[Case], None] | None = None,
             should_stop: Callable[[], bool] = lambda: False,
             tiers=None) -> tuple[Case, ReduceStats]:
    stats = ReduceStats()
    start = time.monotonic()
    deadline = start + budget_s
    typed = retype(case.program)
    stats.typed = typed is not None
    best = dataclasses.replace(case, program=typed) if typed is not None else case
    seen: set = set()

    def prepare(cand: Case) -> Case | None:
        if not stats.typed:
            return cand
        prog = retype(cand.program)
        if prog is None:
            stats.ill_typed += 1
            return None
        return cand if prog == cand.program else dataclasses.replace(cand, program=prog)

    def try_pass(pss) -> bool:
        nonlocal best
        name = pss.__name__
        counts = stats.per_pass.setdefault(name, [0, 0])
        progressed = False
        restart = True
        while restart:
            restart = False
            try:
                for cand in pss(best):
                    if time.monotonic() > deadline or should_stop():
                        stats.out_of_time = True
                        return progressed
                    if size_of(cand) >= size_of(best) or cand in seen:
                        continue
                    seen.add(cand)
                    cand = prepare(cand)
                    if cand is None or cand == best:
                        continue
                    seen.add(cand)
                    counts[0] += 1
                    stats.probes += 1
                    if is_interesting(cand):
                        counts[1] += 1
                        stats.accepted += 1
                        best = cand
                        if not stats.typed:  # the reduced program may now be one the check models
                            prog = retype(best.program)
                            if prog is not None:
                                stats.typed = True
                                best = dataclasses.replace(best, program=prog)
                        progressed = restart = True
                        if on_progress:
                            on_progress(best)
                        break
            except Exception as e:  # a pass that cannot handle a statement kind: report, move on
                stats.errors[name] = f"{type(e).__name__}: {e}"[:200]
                return progressed
        return progressed

    changed = True
    while changed and not stats.out_of_time:
        changed = False
        for tier in (tiers or TIERS):
            for pss in tier:
                changed |= try_pass(pss)
                if stats.out_of_time:
                    break
            if stats.out_of_time:
                break
    # a pass that rewires calls without a dead-code sweep can leave a helper nobody calls
    best = dataclasses.replace(best, program=drop_dead_helpers(best.program))
    stats.seconds = time.monotonic() - start
    return best, stats
