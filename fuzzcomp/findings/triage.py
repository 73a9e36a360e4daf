"""Failure identity: BucketKey, like Hypothesis's InterestingOrigin.

Contract: ``bucket_of(verdict)`` maps a Verdict to its BucketKey (symptom,
stage, normalised signature). Dedup, the minimiser's "still the same bug?"
test and the known-issues list all key on it. The stage is the backend
ladder's answer (``fuzzcomp.attribute.ladder``, run in the worker before bucketing).
For value mismatches the signature is where (output or input), the kind of
mismatch and the culprit op (``fuzzcomp.attribute.culprit``, carried in the verdict's
``signature``); crash signatures are normalised by ``oracles.verdict``. After
minimisation ``dedup_key`` adds the op set of the minimised program; the known-bug registry that
matches on the bucket and the program's ops is ``fuzzcomp.findings.known``.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from fuzzcomp.generators.ir import Program, op_names
from fuzzcomp.oracles import Verdict

from fuzzcomp.base.symptoms import VALUE


@dataclass(frozen=True, order=True)
class BucketKey:
    symptom: str
    stage: str
    signature: str

    def slug(self) -> str:
        digest = hashlib.sha1(f"{self.symptom}|{self.stage}|{self.signature}".encode()).hexdigest()[:8]
        return f"{self.symptom}-{self.stage}-{digest}"

    def to_json(self) -> dict:
        return {"symptom": self.symptom, "stage": self.stage, "signature": self.signature}

    @classmethod
    def from_json(cls, d: dict) -> "BucketKey":
        return cls(d["symptom"], d["stage"], d["signature"])


def culprit_named(signature: str) -> str | None:
    """The op a value bucket's signature names (``... | culprit op: NAME``), None without one."""
    m = re.search(r"culprit op: ([^|;]+)", signature)
    return m.group(1).strip() if m else None


_GLOBALS = re.compile(r"eager='([^']*)' compiled='([^']*)'")


def _global_state_signature(v: Verdict) -> str | None:
    """A torch global left different after the call: which ones (grad mode, deterministic
    algorithms, default dtype) is the root cause, so each gets its own bucket."""
    if not v.label.startswith("state torch globals"):
        return None
    m = _GLOBALS.search(v.detail)
    if not m:
        return "torch globals"
    pairs = [dict(kv.split("=", 1) for kv in side.split() if "=" in kv) for side in m.groups()]
    changed = sorted(k for k in pairs[0] if pairs[0].get(k) != pairs[1].get(k))
    return "torch globals: " + ",".join(changed or ["?"])


def _zero_sign(v: Verdict) -> bool:
    """A -0.0 that comes back as +0.0 (or a +-inf that flips with it): one root cause whatever
    op produced the zero, so the culprit op does not split it."""
    if v.oracle != "exact-special":
        return False
    m = re.search(r"eager=(-?inf) compiled=(-?inf)\b", v.detail)
    return "zeros change sign" in v.detail or bool(m and m.group(1) != m.group(2))


def _value_signature(v: Verdict) -> str:
    state = _global_state_signature(v)
    if state:
        return state
    if _zero_sign(v):
        return "output zero sign"
    detail = v.detail.split(": ", 1)[-1]
    if detail.startswith("shape"):
        kind = "shape"
    elif detail.startswith("dtype"):
        kind = "dtype"
    elif "non-finite" in detail:
        kind = "non-finite"
    elif "elements differ" in detail:
        kind = "exact-values"
    else:
        kind = "values"
    where = "output" if v.label.startswith("output") else "input"
    if v.oracle == "caller-write":  # its check is its own: against the caller-write reference
        where = "caller write"
    # the culprit op (fuzzcomp.attribute.culprit) separates distinct silent bugs of one symptom
    return f"{where} {kind}" + (f" | {v.signature}" if v.signature else "")


def bucket_of(v: Verdict) -> BucketKey:
    if v.symptom in VALUE:
        return BucketKey(v.symptom, v.stage, _value_signature(v))
    return BucketKey(v.symptom, v.stage, v.signature or re.sub(r"\d+", "N", v.detail)[:80])


def op_set(program: Program) -> set[str]:
    """The program's ops, an unwrapped if-branch op counted as that op."""
    return {op.removeprefix("branch:") for op in op_names(program)}


def dedup_key(key: BucketKey, program: Program) -> str:
    return f"{key.slug()}:{'+'.join(sorted(op_set(program)))}"
