"""Verdicts: what an oracle concluded about one case.

Contract: a ``Verdict`` is a frozen record naming the symptom, the compiler
stage it is attributed to, the oracle that raised it, a one-line detail and a
normalised ``signature`` (error type and message with numbers and addresses
masked) that triage uses for bucketing. ``SYMPTOMS`` and ``STAGES`` are the
closed vocabularies.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SYMPTOMS = ("numeric", "gradient", "mutation", "aliasing", "recompile", "compile-crash",
            "runtime-crash", "error-parity", "hang", "segfault")
STAGES = ("capture", "autograd", "decomposition", "inductor", "runtime", "backend", "unknown")

# Severity order used to pick a case's primary verdict.
SEVERITY = {s: i for i, s in enumerate(("segfault", "hang", "compile-crash", "runtime-crash",
                                        "numeric", "mutation", "gradient", "aliasing",
                                        "recompile", "error-parity"))}


@dataclass(frozen=True)
class Verdict:
    symptom: str
    stage: str
    oracle: str
    detail: str
    call: int = -1
    label: str = ""
    signature: str = ""

    def __post_init__(self):
        if self.symptom not in SYMPTOMS:
            raise ValueError(f"unknown symptom {self.symptom!r}")
        if self.stage not in STAGES:
            raise ValueError(f"unknown stage {self.stage!r}")


_INNER = re.compile(r"raised:\s*(?:\|\s*)?([A-Za-z_][\w.]*):\s*(.*)")


def error_signature(type_name: str, message: str) -> str:
    """``Type: message`` with the wrapped inner error unwrapped and volatile parts masked."""
    m = _INNER.search(message)
    if m:
        type_name, message = m.group(1).split(".")[-1], m.group(2)
    parts = message.split(" | ")
    text = parts[0]
    if re.search(r"\bat \d+:\d+:$", text) and len(parts) > 1:  # Triton compile error: add its cause
        text = f"{text} {parts[1]}"
    text = re.sub(r"0x[0-9a-fA-F]+", "ADDR", text)
    text = re.sub(r"/[^\s:'\"]+", "PATH", text)
    # a tensor's type and shape in autograd's messages ("[torch.cuda.HalfTensor [3, 4]]",
    # "[CUDABFloat16Type [2]]") and the graph's placeholder sets name the program, not the bug
    text = re.sub(r"\[(?:torch\.[\w.]*Tensor|\w+Type)\s*\[[^\]]*\]\]", "[TENSOR]", text)
    text = re.sub(r"\{[^{}]*\}", "{...}", text)
    text = re.sub(r"\d+", "N", text)
    text = re.sub(r"(?<=[A-Za-z_])_N\b", "", text)  # generated node names: permute_1, copy__2
    text = re.sub(r"\s+", " ", text).strip()
    return f"{type_name}: {text[:120]}"


def primary(verdicts: list[Verdict]) -> Verdict:
    return min(verdicts, key=lambda v: (SEVERITY[v.symptom], v.call))
