"""Liveness of a program's statements: what its outputs, writes and returns depend on.

Contract: pure functions of the IR. ``dce(program)`` is the program without the assignments,
calls and blocks nothing live reads (in-place statements, early returns and their operands stay),
and without helpers nobody calls (``drop_dead_helpers``); ``calls_to(p, name)`` counts the
calls of one helper or submodule; ``has(body, kinds)`` says whether a body holds a statement
of those kinds. The reducer drops dead code with it, and attribution names only live statements.
"""
from __future__ import annotations

import dataclasses

from .ir import (Assign, CallFn, CondOp, If, Loop, Mutate, Program, Return, Stmt, While, With,
                  cond_refs, refs_of, walk, walk_program)


def has(body, kinds) -> bool:
    return any(isinstance(x, kinds) for x in walk(body))


def calls_to(p: Program, name: str) -> int:
    n = 0
    for s in walk_program(p):
        if isinstance(s, CallFn) and s.fn == name:
            n += 1
        elif isinstance(s, CondOp) and name in (s.true_fn, s.false_fn):
            n += 1
    return n


def dce(program: Program) -> Program:
    """Drop assignments and calls nobody reads (in-place statements, early returns and their
    operands stay); drop blocks whose results are dead."""
    def sweep(body: tuple[Stmt, ...], live: set[str]) -> tuple[tuple[Stmt, ...], set[str]]:
        kept: list[Stmt] = []
        for s in reversed(body):
            if isinstance(s, (Assign, CallFn, CondOp)):
                if s.out not in live:
                    continue
                live = live | refs_of(s)
            elif isinstance(s, (Mutate, Return)):
                live = live | refs_of(s)
            elif isinstance(s, If):
                joins = {n for n, _ in s.joins}
                if not joins & live and not has(s.then + s.orelse, (Mutate, Return)):
                    continue
                then, lt = sweep(s.then, live)
                orelse, le = sweep(s.orelse, live)
                s = dataclasses.replace(s, then=then, orelse=orelse)
                live = live | lt | le | cond_refs(s.cond)
            elif isinstance(s, (Loop, While)):
                carried = {n for n, _ in s.carried}
                if not carried & live and not has(s.body, (Mutate, Return)):
                    continue
                body_live = live | carried
                inner, lb = sweep(s.body, body_live)
                inner, lb = sweep(s.body, lb)  # a second round: values used by the next iteration
                s = dataclasses.replace(s, body=inner)
                live = live | lb | (set(s.items) if isinstance(s, Loop) else {s.var})
                if isinstance(s, Loop) and isinstance(s.count, str):
                    live = live | {s.count}
            elif isinstance(s, With):
                inner, live = sweep(s.body, live)
                if not inner:
                    continue
                s = dataclasses.replace(s, body=inner)
            kept.append(s)
        return tuple(reversed(kept)), live
    body, _ = sweep(program.body, set(program.outputs))
    return drop_dead_helpers(dataclasses.replace(program, body=body))


def drop_dead_helpers(program: Program) -> Program:
    """The program without the helper functions nobody calls any more (never a change of
    behaviour: an uncalled function runs nothing, but its ops would count in the finding's identity)."""
    out = program
    while out.helpers:
        live = tuple(f for f in out.helpers if calls_to(out, f.name))
        if len(live) == len(out.helpers):
            break
        out = dataclasses.replace(out, helpers=live)
    return out
