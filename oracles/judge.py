"""Observation -> Verdicts: crash parity, outputs and input mutations.

Contract: ``judge(obs)`` returns every discrepancy between eager and compiled
in one observation, as Verdicts, and nothing when they agree. Per call:

* both raise: parity, fine;
* compiled raises, eager doesn't: compile-crash or runtime-crash (a bug);
* eager raises, compiled returns: error-parity (a lower-severity bug);
* both return: each output is judged by the fp64 rule (symptom ``numeric``),
  each input after the call likewise (symptom ``mutation``).

``needs_perturbation(verdicts)`` tells the executor when perturbed eager runs
could still clear a float or integer mismatch; judging again with them is how
ill-conditioned programs are screened out.
"""
from __future__ import annotations

from .fp64rule import compare
from .observation import Observation
from .stage import is_compile_time, stage_of_error
from .verdict import Verdict, error_signature


def judge(obs: Observation) -> list[Verdict]:
    verdicts: list[Verdict] = []
    for k, rec in enumerate(obs.calls):
        e, c = rec.eager, rec.compiled
        if e.error and c.error:
            continue
        if c.error:
            t, msg, where = c.error
            symptom = "compile-crash" if is_compile_time(t, msg) else "runtime-crash"
            verdicts.append(Verdict(symptom, stage_of_error(t, msg, obs.backend), "crash-parity",
                                    f"compiled raised {t}: {msg[:300]}", k, "",
                                    error_signature(t, msg)))
            continue
        if e.error:
            t, msg, _ = e.error
            verdicts.append(Verdict("error-parity", "unknown", "crash-parity",
                                    f"eager raised {t}: {msg[:200]}; compiled returned normally", k,
                                    "", error_signature(t, msg)))
            continue
        verdicts += _judge_values(obs.backend, k, rec)
    return verdicts


def _judge_values(backend: str, k: int, rec) -> list[Verdict]:
    e, c = rec.eager, rec.compiled
    if len(e.values) != len(c.values):
        return [Verdict("numeric", "unknown", "numeric",
                        f"eager gave {len(e.values)} values, compiled {len(c.values)}", k)]
    out = []
    ref = rec.fp64.values if rec.fp64 is not None and rec.fp64.error is None else None
    for i, label in enumerate(e.labels):
        r = ref[i] if ref is not None and i < len(ref) else None
        pert = [p.values[i] for p in rec.perturbed if p.error is None and i < len(p.values)]
        status, reason = compare(e.values[i], rec.eager_again.values[i], r, c.values[i], pert)
        if status == "mismatch":
            symptom = "mutation" if label.startswith("input ") else "numeric"
            out.append(Verdict(symptom, "unknown", "fp64-rule", f"{label}: {reason}", k, label))
    return out


def needs_perturbation(verdicts: list[Verdict]) -> bool:
    return any(v.oracle == "fp64-rule" for v in verdicts)
