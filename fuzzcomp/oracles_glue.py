"""Verdicts the campaign itself observes: a worker that died or hung.

Contract: ``crash_verdict(status, message)`` turns an isolation event (the
worker died or timed out while eager alone runs fine) into a Verdict with
symptom ``segfault`` or ``hang``. ``needs_eager_rerun(first)`` and
``blames_compiler(first, eager)`` decide whether such an event is the
compiler's fault: a timeout in an eager phase never is; a compiled run that
outlived the run limit is only when eager alone ran all of its calls in under
half that limit (a slow program is not a hung compiler).
"""
from __future__ import annotations

from fuzzcomp.oracles import Verdict

from .messages import DIED, DONE, TIMEOUT


def needs_eager_rerun(first) -> bool:
    """Worth an eager-only re-run: the worker died, or timed out outside its eager phase."""
    if first.status == DIED:
        return True
    return first.status == TIMEOUT and (first.stats or {}).get("phase") != "eager"


def blames_compiler(first, eager) -> bool:
    """``first`` died or timed out; ``eager`` is the eager-only re-run of the same case."""
    if not needs_eager_rerun(first) or eager.status != DONE or not eager.valid:
        return False
    stats = first.stats or {}
    if first.status == TIMEOUT and stats.get("phase") == "run" and stats.get("limit"):
        return float((eager.timings or {}).get("eager", 0.0)) < stats["limit"] / 2
    return True


def crash_verdict(status: str, message: str) -> Verdict:
    symptom = "segfault" if status == DIED else "hang"
    return Verdict(symptom, "unknown", "isolation", f"compiled run: {message}; eager alone completes",
                   signature=symptom)
