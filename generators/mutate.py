"""Mutate a recorded choice stream and regenerate, as Hypothesis does: edit choices, not programs.

Contract: ``mutant(choices, ranges, seed, case_seed, config, donor=None)`` is
pure and deterministic: the same arguments give the same ``Mutant`` (its Case,
hence byte-identical source, and its full choice record). The parent's record
is edited by one to three small operations drawn from ``random.Random(seed)``
(a point change within the draw's recorded range, a block zeroed, deleted or
duplicated, a block spliced in from a donor record at the same position, or
the tail cut and grown afresh); draws the edited list does not cover come
from the seed, never default to the smallest choice. Because the generator
brings every replayed draw into its range (``ChoiceStream``), any edit gives a valid program.
``Mutant.record`` replayed alone (``generate_from_choices``) rebuilds the
same Case, so a mutant is reproducible from its record, or from its parent's
record plus the seed.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from .build import GenConfig, generate_from_stream
from .choices import ChoiceStream
from .ir import Case

MAX_BLOCK = 8


@dataclass(frozen=True)
class Mutant:
    case: Case
    record: tuple[int, ...]   # every draw the mutant's generation made (replays to the same Case)
    ranges: tuple[int, ...]   # the width of each draw
    ops: tuple[str, ...]      # the edits made, for the log ("point@12", "delete@40+3", ...)


def edit(choices, ranges, rng: random.Random, donor=None) -> tuple[list[int], list[str]]:
    """The parent's record with 1-3 edits applied; returns (edited list, edit names)."""
    out = list(choices)
    widths = list(ranges) + [0] * max(0, len(out) - len(ranges))
    names: list[str] = []
    kinds = ["point", "point", "zero", "delete", "duplicate", "regrow"] + (["splice"] * 2 if donor else [])
    for _ in range(rng.randint(1, 3)):
        if not out:
            break
        kind = rng.choice(kinds)
        i = rng.randrange(len(out))
        n = rng.randint(1, MAX_BLOCK)
        if kind == "point":
            width = widths[i] if i < len(widths) else 0
            out[i] = rng.randint(0, width) if width > 0 else rng.randint(0, 3)
            names.append(f"point@{i}")
        elif kind == "zero":
            out[i:i + n] = [0] * len(out[i:i + n])
            names.append(f"zero@{i}+{n}")
        elif kind == "delete":
            del out[i:i + n]
            del widths[i:i + n]
            names.append(f"delete@{i}+{n}")
        elif kind == "duplicate":
            out[i + n:i + n] = out[i:i + n]
            widths[i + n:i + n] = widths[i:i + n]
            names.append(f"duplicate@{i}+{n}")
        elif kind == "regrow":
            del out[i:]
            del widths[i:]
            names.append(f"regrow@{i}")
        elif kind == "splice" and donor:
            j = min(i, max(0, len(donor) - 1))
            block = list(donor[j:j + n])
            out[i:i + len(block)] = block
            names.append(f"splice@{i}+{len(block)}")
    return out, names


def mutant(choices, ranges, seed: int, case_seed: int, config: GenConfig = GenConfig(),
           donor=None) -> Mutant:
    """A mutated Case of the parent whose generation recorded ``choices`` (and ``ranges``)."""
    rng = random.Random(seed)
    edited, names = edit(choices, ranges, rng, donor)
    stream = ChoiceStream(seed=rng.randrange(2 ** 31), replay=edited)
    case = generate_from_stream(stream, case_seed, config)
    return Mutant(case, tuple(stream.record), tuple(stream.ranges), tuple(names))


def recorded(seed: int, config: GenConfig = GenConfig()) -> tuple[Case, tuple[int, ...], tuple[int, ...]]:
    """``generate(seed)`` with the record and ranges of its choice stream."""
    stream = ChoiceStream(seed=seed)
    case = generate_from_stream(stream, seed, config)
    return case, tuple(stream.record), tuple(stream.ranges)
