"""A campaign's cases as the parent sees them: the seed of case N, and coarse features for the
coverage plot (cheap, computed in the parent, no run).
"""
from __future__ import annotations

from fuzzcomp.generators.ir import Assign, If, Mutate, walk


def case_seed(base: int, index: int) -> int:
    return (base * 1_000_003 + index) % (2 ** 31)


def case_features(case) -> list[str]:
    """Coarse features of a case for the coverage plot (cheap; computed in the parent)."""
    prog = case.program
    stmts = list(walk(prog.body))
    feats = {f"dtype:{i.type.dtype}" for i in prog.inputs} | {f"layout:{i.layout}" for i in prog.inputs}
    feats.add(f"dynamic:{case.compile.dynamic}")
    feats.add(f"calls:{len(case.calls)}")
    if any(isinstance(s, If) for s in stmts):
        feats.add("control-flow:if")
    if any(isinstance(s, Mutate) for s in stmts):
        feats.add("in-place")
    if any(i.requires_grad for i in prog.inputs):
        feats.add("requires-grad")
    feats.add(f"stmts:{min(sum(isinstance(s, (Assign, Mutate)) for s in stmts), 10)}")
    return sorted(feats)
