"""Reduction passes over a whole Case: each one small, named, and pure.

Contract: a pass is a function ``Case -> Iterator[Case]`` yielding candidate
cases that are strictly smaller (fewer calls, outputs, statements, inputs, or
smaller sizes, simpler layouts and options) in the order most likely to
succeed. Passes never run anything: the reducer decides which candidate keeps
the failure. ``TIERS`` orders them from cheap-and-big to fine-grained.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Iterator

from fuzzcomp.generators.ir import (Assign, Call, Case, If, Input, Lit, Mutate, Program, Ref, Size,
                                    SizeCond, Stmt, refs_of, walk)

Pass = Callable[[Case], Iterator[Case]]


def _with_program(case: Case, **changes) -> Case:
    return dataclasses.replace(case, program=dataclasses.replace(case.program, **changes))


# ---- renaming and dead-code elimination -------------------------------------------
def _rename_arg(a, old: str, new: str):
    if isinstance(a, Ref) and a.name == old:
        return Ref(new)
    if isinstance(a, Size) and a.var == old:
        return Size(new, a.dim)
    return a


def rename(stmt: Stmt, old: str, new: str) -> Stmt:
    if isinstance(stmt, Assign):
        return dataclasses.replace(stmt, args=tuple(_rename_arg(a, old, new) for a in stmt.args))
    if isinstance(stmt, Mutate):
        return dataclasses.replace(stmt, target=new if stmt.target == old else stmt.target,
                                   args=tuple(_rename_arg(a, old, new) for a in stmt.args))
    cond = stmt.cond if stmt.cond.var != old else SizeCond(new, stmt.cond.dim, stmt.cond.value)
    return dataclasses.replace(stmt, cond=cond, then=tuple(rename(s, old, new) for s in stmt.then),
                               orelse=tuple(rename(s, old, new) for s in stmt.orelse))


def dce(program: Program) -> Program:
    """Drop assignments nobody reads (in-place statements and their operands stay)."""
    def sweep(body: tuple[Stmt, ...], live: set[str]) -> tuple[tuple[Stmt, ...], set[str]]:
        kept: list[Stmt] = []
        for s in reversed(body):
            if isinstance(s, Assign):
                if s.out not in live:
                    continue
                live = live | refs_of(s)
            elif isinstance(s, Mutate):
                live = live | refs_of(s)
            else:
                joins = {n for n, _ in s.joins}
                if not joins & live and not any(isinstance(x, Mutate) for x in walk(s.then + s.orelse)):
                    continue
                then, lt = sweep(s.then, live)
                orelse, le = sweep(s.orelse, live)
                s = dataclasses.replace(s, then=then, orelse=orelse)
                live = live | lt | le | {s.cond.var}
            kept.append(s)
        return tuple(reversed(kept)), live
    body, _ = sweep(program.body, set(program.outputs))
    return dataclasses.replace(program, body=body)


def _defined_before(program: Program, index: int) -> list[tuple[str, object]]:
    """(name, type) of inputs and top-level values defined before statement ``index``."""
    names = [(i.name, i.type) for i in program.inputs]
    for s in program.body[:index]:
        if isinstance(s, Assign):
            names.append((s.out, s.type))
        elif isinstance(s, If):
            names += list(s.joins)
    return names


# ---- passes -----------------------------------------------------------------------
def drop_outputs(case: Case) -> Iterator[Case]:
    outs = case.program.outputs
    if len(outs) > 1:
        for o in outs:
            yield _with_program(case, body=dce(dataclasses.replace(case.program, outputs=(o,))).body,
                                outputs=(o,))


def drop_calls(case: Case) -> Iterator[Case]:
    calls = case.calls
    if len(calls) <= 1:
        return
    for c in calls:
        yield dataclasses.replace(case, calls=(c,))
    for i in range(len(calls)):
        yield dataclasses.replace(case, calls=calls[:i] + calls[i + 1:])


def delete_statements(case: Case) -> Iterator[Case]:
    """Delete one top-level statement, rewiring its readers to a same-typed value."""
    p = case.program
    for i in reversed(range(len(p.body))):
        s = p.body[i]
        rest = p.body[i + 1:]
        if isinstance(s, Mutate):
            yield _with_program(case, body=dce(dataclasses.replace(p, body=p.body[:i] + rest)).body)
            continue
        if isinstance(s, If):
            for branch in (s.then, s.orelse):  # unwrap: keep one branch inline
                prog = dataclasses.replace(p, body=p.body[:i] + branch + rest)
                yield _with_program(case, body=dce(prog).body)
            continue
        earlier = _defined_before(p, i)
        arg_names = [a.name for a in s.args if isinstance(a, Ref)]
        cands = [n for n, t in earlier if t == s.type and n in arg_names] + \
                [n for n, t in reversed(earlier) if t == s.type and n not in arg_names]
        for new in cands[:3]:
            body = p.body[:i] + tuple(rename(x, s.out, new) for x in rest)
            outputs = tuple(new if o == s.out else o for o in p.outputs)
            prog = dce(dataclasses.replace(p, body=body, outputs=outputs))
            yield _with_program(case, body=prog.body, outputs=prog.outputs)


def simplify_branches(case: Case) -> Iterator[Case]:
    """Delete one statement inside an if-branch (not the join assignment)."""
    p = case.program
    for i, s in enumerate(p.body):
        if not isinstance(s, If):
            continue
        joins = {n for n, _ in s.joins}
        for side in ("then", "orelse"):
            branch = getattr(s, side)
            for j, inner in enumerate(branch):
                if isinstance(inner, Assign) and inner.out in joins:
                    continue
                new_if = dataclasses.replace(s, **{side: branch[:j] + branch[j + 1:]})
                yield _with_program(case, body=p.body[:i] + (new_if,) + p.body[i + 1:])


def drop_inputs(case: Case) -> Iterator[Case]:
    p = case.program
    used = set().union(*(refs_of(s) for s in p.body)) | set(p.outputs) if p.body else set(p.outputs)
    for k, inp in enumerate(p.inputs):
        if inp.name not in used and len(p.inputs) > 1:
            yield _with_program(case, inputs=p.inputs[:k] + p.inputs[k + 1:])


def _used_symbols(p: Program) -> set[str]:
    return {d for i in p.inputs for d in i.type.shape if isinstance(d, str)}


def shrink_sizes(case: Case) -> Iterator[Case]:
    p = case.program
    for j, sym in enumerate(p.symbols):
        values = sorted({c.sizes[j] for c in case.calls})
        for target in (1, 2, 3, 4, 5, 7, 8):
            if target >= max(values):
                break
            calls = tuple(Call(c.sizes[:j] + (min(c.sizes[j], target),) + c.sizes[j + 1:], c.seed)
                          for c in case.calls)
            if calls != case.calls:
                yield dataclasses.replace(case, calls=calls)


def simplify_inputs(case: Case) -> Iterator[Case]:
    p = case.program
    for k, inp in enumerate(p.inputs):
        if inp.layout != "contiguous":
            new = dataclasses.replace(inp, layout="contiguous")
            yield _with_program(case, inputs=p.inputs[:k] + (new,) + p.inputs[k + 1:])


def simplify_options(case: Case) -> Iterator[Case]:
    if case.compile.dynamic is not None:
        yield case.with_compile(dynamic=None)
    if case.compile.fullgraph:
        yield case.with_compile(fullgraph=False)


def reseed_calls(case: Case) -> Iterator[Case]:
    """Small seeds read better in a repro; values change, so the reducer must re-check."""
    calls = tuple(Call(c.sizes, k) for k, c in enumerate(case.calls))
    if calls != case.calls:
        yield dataclasses.replace(case, calls=calls)


TIERS: list[list[Pass]] = [
    [drop_outputs, drop_calls],
    [delete_statements, simplify_branches, drop_inputs],
    [shrink_sizes, simplify_inputs, simplify_options, reseed_calls],
]


def size_of(case: Case) -> tuple:
    """A well-founded measure: every accepted candidate must make it smaller."""
    p = case.program
    n_stmts = sum(1 for _ in walk(p.body))
    total = sum(sum(c.sizes) for c in case.calls)
    fancy = sum(i.layout != "contiguous" for i in p.inputs) + (case.compile.dynamic is not None) \
        + case.compile.fullgraph
    seeds = sum(min(c.seed, 10**6) for c in case.calls)
    return (n_stmts + len(p.outputs) + len(p.inputs), len(case.calls), total, fancy, seeds)
