"""Verdicts the campaign itself observes: a worker that died or hung.

Contract: ``crash_verdict(status, message)`` turns an isolation event (the
worker died or timed out while eager alone runs fine) into a Verdict with
symptom ``segfault`` or ``hang``. ``needs_eager_rerun(first)`` and
``blames_compiler(first, eager)`` decide whether such an event is the
compiler's fault: a timeout in an eager phase never is; a compiled run that
outlived the run limit is only when eager alone ran all of its calls in under
half that limit (a slow program is not a hung compiler).

A sticky CUDA error (a device-side assert, an illegal memory access: every later CUDA call of
the process fails too) is a worker death: ``sticky_cuda(result)`` says whether a worker's answer
shows one (its message, a verdict, or the worker's own health probe ``stats["cuda_poisoned"]``),
and ``as_death(result, kind)`` turns a check job's answer into ``died`` (the worker is restarted
and the case re-run eager-only on the fresh one) unless it already holds findings; its
``crash_verdict`` is a ``runtime-crash``: compiled raised a sticky CUDA error where eager runs.
"""
from __future__ import annotations

from fuzzcomp.oracles import Verdict

import re
from dataclasses import replace

from fuzzcomp.base.messages import DIED, DONE, TIMEOUT

STICKY_PREFIX = "sticky CUDA error: "
_STICKY = re.compile(r"device-side assert|illegal memory access|unspecified launch failure|"
                     r"AcceleratorError: CUDA error|CUDA error: an illegal instruction|misaligned address")


def sticky_cuda(result) -> str:
    """The sticky CUDA error a worker's answer shows ("" if none)."""
    stats = result.stats if isinstance(result.stats, dict) else {}
    if stats.get("cuda_poisoned"):  # the worker's own probe: its context no longer synchronises
        return str(stats["cuda_poisoned"])
    texts = [result.message or ""] + [v.detail for v in (result.verdicts or [])]
    return next((t for t in texts if t and _STICKY.search(t)), "")


def as_death(result, kind: str):
    """A check job's answer from a worker a sticky CUDA error poisoned, as a death: the campaign
    then restarts nothing more and re-runs the case eager-only on the fresh worker. An answer
    that already holds findings (compiled raised, the verdicts were judged) is kept."""
    what = sticky_cuda(result)
    if not what or kind != "check" or (result.status == DONE and result.verdicts):
        return result
    stats = dict(result.stats or {}) if isinstance(result.stats, dict) else {}
    stats.update(phase="run", sticky_cuda=True)
    return replace(result, status=DIED, stats=stats, verdicts=[],
                   message=STICKY_PREFIX + what.strip().splitlines()[0][:300])


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
    if message.startswith(STICKY_PREFIX):
        return Verdict("runtime-crash", "unknown", "isolation",
                       f"compiled run: {message}; eager alone completes", signature="sticky CUDA error")
    symptom = "segfault" if status == DIED else "hang"
    return Verdict(symptom, "unknown", "isolation", f"compiled run: {message}; eager alone completes",
                   signature=symptom)
