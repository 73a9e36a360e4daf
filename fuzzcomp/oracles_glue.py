"""Verdicts the campaign itself observes: a worker that died or hung.

Contract: ``crash_verdict(status, message)`` turns an isolation event (the
worker died or timed out while eager alone runs fine) into a Verdict with
symptom ``segfault`` or ``hang``.
"""
from __future__ import annotations

from fuzzcomp.oracles import Verdict

from .messages import DIED


def crash_verdict(status: str, message: str) -> Verdict:
    symptom = "segfault" if status == DIED else "hang"
    return Verdict(symptom, "unknown", "isolation", f"compiled run: {message}; eager alone completes",
                   signature=symptom)
