"""Hypothesis strategies over the generator: ``programs()`` and ``cases()``.

Contract: both strategies build through the same ``_build`` path as
``generate``, with a ChoiceStream whose every draw is a Hypothesis draw, so
Hypothesis shrinks the generator's decisions (fewer statements, smaller
sizes, fewer calls) exactly as its own shrinker shrinks any data. A ``DrawStream`` records its draws like any ChoiceStream,
so ``generate_from_choices(stream.record)`` rebuilds the same case without
Hypothesis. Hypothesis is imported here only (not by the rest of the package).
"""
from __future__ import annotations

from hypothesis import strategies as st

from .build import GenConfig, generate_from_stream
from .choices import ChoiceStream
from .ir import Case


class DrawStream(ChoiceStream):
    """A ChoiceStream whose integers come from Hypothesis's ``draw``."""

    def __init__(self, draw):  # noqa: D401 - no seed: Hypothesis owns the randomness
        self._draw = draw
        self._rng = None
        self._replay = None
        self.record = []

    def integer(self, lo: int, hi: int) -> int:
        if hi < lo:
            raise ValueError(f"empty range [{lo}, {hi}]")
        value = self._draw(st.integers(lo, hi))
        self.record.append(value - lo)
        return value


@st.composite
def _cases(draw, config: GenConfig, backend: str | None, seeds: bool) -> Case:
    if seeds:  # plain seeds: every case is exactly ``generate(seed)``
        from .build import generate
        case = generate(draw(st.integers(0, 2**31 - 1)), config)
    else:
        case = generate_from_stream(DrawStream(draw), 0, config)
    return case.with_compile(backend=backend) if backend else case


def cases(config: GenConfig = GenConfig(), backend: str | None = None, seeds: bool = False):
    """A strategy of Cases. ``backend`` overrides the compile backend; ``seeds=True`` draws
    seeds for ``generate`` (reproducible by seed) instead of driving the choice stream."""
    return _cases(config, backend, seeds)


def programs(config: GenConfig = GenConfig()):
    """A strategy of Programs (the program of each drawn Case)."""
    return cases(config).map(lambda c: c.program)


__all__ = ["DrawStream", "cases", "programs"]
