"""One recorded stream of random decisions.

Contract: every random decision the generator makes goes through a
``ChoiceStream``. A stream built from a seed draws from its own private
``random.Random`` (never the global one) and records each draw as a small
non-negative integer. A stream built from a recorded list replays it (a negative
value is the smallest choice, one past the range wraps around it, and draws past
the end return the smallest choice), so
a shrinker can edit the list and regenerate, as Hypothesis does. Given both a
replay list and a seed, draws past the end of the list come from the seed
instead (a mutation keeps an edited prefix and grows a fresh tail). ``ranges``
records the width (hi - lo) of each draw, so a mutation can pick in range.
"""
from __future__ import annotations

import random
from typing import Sequence, TypeVar

T = TypeVar("T")


class ChoiceStream:
    def __init__(self, seed: int | None = None, replay: Sequence[int] | None = None):
        if seed is None and replay is None:
            raise ValueError("ChoiceStream needs a seed or a replay list")
        self._rng = random.Random(seed) if seed is not None else None
        self._replay = list(replay) if replay is not None else None
        self.record: list[int] = []
        self.ranges: list[int] = []

    def integer(self, lo: int, hi: int) -> int:
        """A whole number in [lo, hi], both ends included."""
        if hi < lo:
            raise ValueError(f"empty range [{lo}, {hi}]")
        i = len(self.record)
        if self._replay is not None and (i < len(self._replay) or self._rng is None):
            raw = self._replay[i] if i < len(self._replay) else 0
            # a value past the range wraps: an edit that shifts a wide draw (a value seed) onto a
            # narrow one (a rare feature's coin) must not land on its largest choice, which a
            # clamp made every such boolean true (a guided campaign's mutants drew global-state
            # changes, a 0.3% feature, in 9 of 156 cases)
            value = lo + (raw % (hi - lo + 1) if raw > hi - lo else max(raw, 0))
        else:
            value = self._rng.randint(lo, hi)
        self.record.append(value - lo)
        self.ranges.append(hi - lo)
        return value

    def boolean(self, p_true: float = 0.5) -> bool:
        return self.integer(0, 999) >= round((1.0 - p_true) * 1000)

    def choice(self, items: Sequence[T]) -> T:
        if not items:
            raise ValueError("choice from an empty sequence")
        return items[self.integer(0, len(items) - 1)]

    def weighted(self, items: Sequence[T], weights: Sequence[float]) -> T:
        """Pick one item with probability proportional to its weight."""
        total = sum(weights)
        if not items or total <= 0:
            raise ValueError("weighted choice needs items with positive total weight")
        scale = 10_000
        point = self.integer(0, scale - 1) * total / scale
        acc = 0.0
        for item, w in zip(items, weights):
            acc += w
            if point < acc:
                return item
        return items[-1]

    def subseed(self) -> int:
        """A 31-bit seed for value generation (tensor contents)."""
        return self.integer(0, 2**31 - 1)
