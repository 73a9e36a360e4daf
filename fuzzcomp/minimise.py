"""The reducer: shrink a failing Case while it keeps its BucketKey.

Contract: ``minimise(case, is_interesting, budget_s)`` runs the tiers of
``passes.TIERS`` until a whole round makes no progress or the budget is spent,
and returns the smallest interesting case found plus per-pass statistics. A
candidate is accepted only if it is smaller by ``passes.size_of`` and
``is_interesting`` holds (same bucket, eager still valid); ``should_stop`` ends
it early (Ctrl-C) with the best case so far. Passes that make no
progress are reported in the stats, never looped on.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from fuzzcomp.generators.ir import Case

from .passes import TIERS, size_of


@dataclass
class ReduceStats:
    probes: int = 0
    accepted: int = 0
    seconds: float = 0.0
    out_of_time: bool = False
    per_pass: dict = field(default_factory=dict)  # name -> [tried, accepted]

    def to_json(self) -> dict:
        return {"probes": self.probes, "accepted": self.accepted, "seconds": round(self.seconds, 2),
                "out_of_time": self.out_of_time, "per_pass": self.per_pass}


def minimise(case: Case, is_interesting: Callable[[Case], bool], budget_s: float = 120.0,
             on_progress: Callable[[Case], None] | None = None,
             should_stop: Callable[[], bool] = lambda: False) -> tuple[Case, ReduceStats]:
    stats = ReduceStats()
    start = time.monotonic()
    deadline = start + budget_s
    best = case
    seen: set = set()

    def try_pass(pss) -> bool:
        nonlocal best
        name = pss.__name__
        counts = stats.per_pass.setdefault(name, [0, 0])
        progressed = False
        restart = True
        while restart:
            restart = False
            for cand in pss(best):
                if time.monotonic() > deadline or should_stop():
                    stats.out_of_time = True
                    return progressed
                if size_of(cand) >= size_of(best) or cand in seen:
                    continue
                seen.add(cand)
                counts[0] += 1
                stats.probes += 1
                if is_interesting(cand):
                    counts[1] += 1
                    stats.accepted += 1
                    best = cand
                    progressed = restart = True
                    if on_progress:
                        on_progress(best)
                    break
        return progressed

    changed = True
    while changed and not stats.out_of_time:
        changed = False
        for tier in TIERS:
            for pss in tier:
                changed |= try_pass(pss)
                if stats.out_of_time:
                    break
            if stats.out_of_time:
                break
    stats.seconds = time.monotonic() - start
    return best, stats
