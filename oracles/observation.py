"""What one execution of a case saw, as the oracles consume it.

Contract: an ``Observation`` holds, per call of the schedule, the outcome of
eager, of eager again (nondeterminism screen), of the fp64 reference run (None
when the program cannot run in fp64), of the compiled run, and of any
perturbed eager runs. An outcome is any object with ``values`` (tensors or
scalars: outputs, then the inputs after the call), ``labels`` (one per value)
and ``error`` (None or ``(type name, message, frames)``). ``stats`` carries
compile counters (frames, graphs, graph breaks) per call.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class CallRecord:
    eager: Any
    eager_again: Any
    fp64: Any
    compiled: Any
    perturbed: list = field(default_factory=list)


@dataclass
class Observation:
    backend: str
    calls: list[CallRecord]
    stats: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)

    @property
    def eager_valid(self) -> bool:
        """The program ran in eager on every call (invalid cases waste compile time)."""
        return all(c.eager.error is None for c in self.calls)
