"""Compiler-signal coverage of a campaign over time, from its event log alone.

Contract: ``signal_coverage(events)`` reads the ``signals`` of each case
event (``fuzzcomp.run.compiler_signals``; the first event per case index counts) and
returns ``distinct`` (signals seen at all), ``once`` (seen in exactly one
case), ``cases_with_signals``, the arms of a guided campaign (cases per
``origin.arm``) and ``series``: after each case, (minutes since the first
event, distinct, once) for the report's plot. Campaigns logged before
signals existed give zeros.
"""
from __future__ import annotations

from collections import Counter


def signal_coverage(events) -> dict:
    counts: Counter = Counter()
    arms: Counter = Counter()
    series: list[tuple[float, int, int]] = []
    seen: set = set()
    t0 = None
    once = 0
    with_signals = 0
    for ev in events:
        t = ev.get("t")
        if isinstance(t, (int, float)):
            t0 = t if t0 is None else min(t0, t)
        if ev.get("event") != "case" or ev.get("index") in seen:
            continue
        seen.add(ev.get("index"))
        if isinstance(ev.get("origin"), dict):
            arms[str(ev["origin"].get("arm"))] += 1
        sigs = set(ev.get("signals") or ())
        if not sigs:
            continue
        with_signals += 1
        for s in sigs:
            counts[s] += 1
            once += 1 if counts[s] == 1 else -1 if counts[s] == 2 else 0
        if isinstance(t, (int, float)):
            series.append((round((t - t0) / 60, 3), len(counts), once))
    return {"distinct": len(counts), "once": once, "cases_with_signals": with_signals,
            "arms": dict(arms), "series": series}
