"""Reduction passes over a whole Case: each one small, named, and pure.

Contract: a pass is a function ``Case -> Iterator[Case]`` yielding candidate
cases that are strictly smaller by ``size_of`` (fewer calls, outputs,
statements, inputs, lower ranks, fewer symbols, smaller sizes, float32 dtypes,
simpler layouts, constants and options) in the order most likely to succeed,
biggest cuts first. Passes never probe anything: the reducer decides which
candidate keeps the failure. A candidate may carry stale statement types (a
rank or dtype changed upstream); the reducer re-types it with
``typecheck.retype`` and drops it when it no longer type-checks, so passes
may propose boldly. ``TIERS`` orders them from cheap-and-big to fine-grained.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Callable, Iterator

from fuzzcomp.generators.ir import (Assign, CallFn, Case, CondOp, If, Lit, Loop, Mutate, Program, Ref,
                                    TensorType, While, refs_of, walk, walk_program)

from fuzzcomp.reduce import passes_structure as ps
from fuzzcomp.reduce.ir_edits import _has, dce, rename, with_program, schedule_fancy, structure_weight  # noqa: F401  (re-exported)

Pass = Callable[[Case], Iterator[Case]]


# ---- renaming and dead-code elimination -------------------------------------------



def _defined_before(program: Program, index: int) -> list[tuple[str, object]]:
    """(name, type) of inputs and top-level values defined before statement ``index``."""
    names = [(i.name, i.type) for i in program.inputs if i.kind in ("tensor", "alias")]
    for s in program.body[:index]:
        if isinstance(s, (Assign, CallFn, CondOp)):
            names.append((s.out, s.type))
        elif isinstance(s, If):
            names += list(s.joins)
        elif isinstance(s, (Loop, While)):
            names += list(s.carried)
    return names


# ---- passes -----------------------------------------------------------------------
def drop_outputs(case: Case) -> Iterator[Case]:
    outs = case.program.outputs
    if len(outs) > 1:
        for o in outs:
            yield with_program(case, body=dce(dataclasses.replace(case.program, outputs=(o,))).body,
                                outputs=(o,))


def retarget_outputs(case: Case) -> Iterator[Case]:
    """An output that is a bare input becomes a mutated input instead, so the other input can go."""
    p = case.program
    names = {i.name for i in p.inputs}
    targets = list(dict.fromkeys(s.target for s in p.body if isinstance(s, Mutate)))
    for k, o in enumerate(p.outputs):
        if o in names:
            for t in targets:
                if t != o:
                    outs = tuple(dict.fromkeys(p.outputs[:k] + (t,) + p.outputs[k + 1:]))
                    used = set(outs).union(*(refs_of(s) for s in p.body))
                    inputs = tuple(i for i in p.inputs if i.name in used)
                    if inputs:
                        yield with_program(case, outputs=outs, inputs=inputs)


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
            yield with_program(case, body=dce(dataclasses.replace(p, body=p.body[:i] + rest)).body)
            continue
        if isinstance(s, If):
            for branch in (s.then, s.orelse):  # unwrap: keep one branch inline
                prog = dataclasses.replace(p, body=p.body[:i] + branch + rest)
                yield with_program(case, body=dce(prog).body)
            continue
        if not isinstance(s, (Assign, CallFn, CondOp)):
            continue  # loops, with-blocks: see passes_structure.unwrap_blocks
        earlier = _defined_before(p, i)
        arg_names = sorted(refs_of(s))
        cands = [n for n, t in earlier if t == s.type and n in arg_names] + \
                [n for n, t in reversed(earlier) if t == s.type and n not in arg_names]
        for new in cands[:3]:
            body = p.body[:i] + tuple(rename(x, s.out, new) for x in rest)
            outputs = tuple(new if o == s.out else o for o in p.outputs)
            prog = dce(dataclasses.replace(p, body=body, outputs=outputs))
            yield with_program(case, body=prog.body, outputs=prog.outputs)


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
                if isinstance(inner, Assign) and (inner.out in joins or
                                                  any(inner.out in refs_of(x) for x in branch[j + 1:])):
                    continue
                new_if = dataclasses.replace(s, **{side: branch[:j] + branch[j + 1:]})
                yield with_program(case, body=p.body[:i] + (new_if,) + p.body[i + 1:])


def drop_inputs(case: Case) -> Iterator[Case]:
    p = case.program
    used = set().union(*(refs_of(s) for s in p.body)) | set(p.outputs) if p.body else set(p.outputs)
    used |= {i.alias_of for i in p.inputs if i.kind == "alias"}
    for k, inp in enumerate(p.inputs):
        if inp.name not in used and len(p.inputs) > 1:
            yield with_program(case, inputs=p.inputs[:k] + p.inputs[k + 1:])


def merge_inputs(case: Case) -> Iterator[Case]:
    """Read one plain tensor input where another of the same type was read, and drop the other."""
    p = case.program
    plain = [(k, i) for k, i in enumerate(p.inputs) if i.kind == "tensor"]
    aliased = {i.alias_of for i in p.inputs if i.kind == "alias"}
    for a, (ka, ia) in enumerate(plain):
        for kb, ib in plain[a + 1:]:
            if ib.type != ia.type or ib.name in aliased:
                continue
            body = tuple(rename(x, ib.name, ia.name) for x in p.body)
            outputs = tuple(dict.fromkeys(ia.name if o == ib.name else o for o in p.outputs))
            prog = dce(dataclasses.replace(p, body=body, outputs=outputs,
                                           inputs=p.inputs[:kb] + p.inputs[kb + 1:]))
            yield with_program(case, body=prog.body, outputs=prog.outputs, inputs=prog.inputs,
                                helpers=prog.helpers)


def dealias_inputs(case: Case) -> Iterator[Case]:
    """An input that is a view of another input becomes an input of its own (then the other
    input can go when nothing else reads it)."""
    p = case.program
    for k, inp in enumerate(p.inputs):
        if inp.kind == "alias":
            new = dataclasses.replace(inp, kind="tensor", alias_of=None)
            yield with_program(case, inputs=p.inputs[:k] + (new,) + p.inputs[k + 1:])


def _state_shapes(p: Program) -> list[tuple]:
    """The shapes of the module's state (parameters, buffers) and of tensor globals: they may
    name the program's symbols too (a symbol only they use must not be dropped)."""
    out, todo = [], [p.module] if p.module is not None else []
    while todo:
        m = todo.pop()
        out += [st.type.shape for st in m.state]
        todo += [sub for _, sub in m.submodules]
    return out + [g.type.shape for g in p.globals if g.kind == "tensor"]


def _used_symbols(p: Program) -> set[str]:
    shapes = [i.type.shape for i in p.inputs] + _state_shapes(p)
    return {name for shape in shapes for d in shape if isinstance(d, str)
            for name in re.findall(r"[A-Za-z_]\w*", d)}


def shrink_sizes(case: Case) -> Iterator[Case]:
    p = case.program
    for j, sym in enumerate(p.symbols):
        values = sorted({c.sizes[j] for c in case.calls})
        # keep the calls' sizes distinct and in order (recompiles, guards) but small: 2, 3, ...
        if len(values) > 1:
            rank = {v: v for v in values if v <= 1}
            rank.update({v: 2 + k for k, v in enumerate(x for x in values if x > 1)})
            calls = tuple(dataclasses.replace(c, sizes=c.sizes[:j] + (rank[c.sizes[j]],) + c.sizes[j + 1:])
                          for c in case.calls)
            if calls != case.calls:
                yield dataclasses.replace(case, calls=calls)
        for target in (1, 2, 3, 4, 5, 7, 8):
            if target >= max(values):
                break
            calls = tuple(dataclasses.replace(c, sizes=c.sizes[:j] + (min(c.sizes[j], target),)
                                              + c.sizes[j + 1:]) for c in case.calls)
            if calls != case.calls:
                yield dataclasses.replace(case, calls=calls)


def simplify_inputs(case: Case) -> Iterator[Case]:
    p = case.program
    for k, inp in enumerate(p.inputs):
        if inp.layout != "contiguous":
            new = dataclasses.replace(inp, layout="contiguous")
            yield with_program(case, inputs=p.inputs[:k] + (new,) + p.inputs[k + 1:])


def simplify_options(case: Case) -> Iterator[Case]:
    if case.compile.dynamic is not None:
        yield case.with_compile(dynamic=None)
    if case.compile.fullgraph:
        yield case.with_compile(fullgraph=False)
    if case.compile.mode is not None:
        yield case.with_compile(mode=None)


def reseed_calls(case: Case) -> Iterator[Case]:
    """Small seeds read better in a repro; values change, so the reducer must re-check."""
    calls = tuple(dataclasses.replace(c, seed=k) for k, c in enumerate(case.calls))
    if calls != case.calls:
        yield dataclasses.replace(case, calls=calls)


# ---- passes added for the issue-5 reducer: big cuts, rewiring, ranks, dtypes, constants ----------
def _resolve(sub: dict[str, str], name: str) -> str:
    seen = set()
    while name in sub and name not in seen:  # a reassignment (v = f(v)) maps a name to itself
        seen.add(name)
        name = sub[name]
    return name


def _bypass(p: Program, indices) -> Program | None:
    """Delete the statements at ``indices``; readers of a deleted value read its first operand."""
    gone = set(indices)
    sub: dict[str, str] = {}
    for i in sorted(gone):
        s = p.body[i]
        if isinstance(s, Assign):
            operand = next((a.name for a in s.args if isinstance(a, Ref)), None)
            if operand is None:
                return None
            sub[s.out] = _resolve(sub, operand)
        elif not isinstance(s, Mutate):  # regions are unwrapped by their own passes
            gone.discard(i)
    if not gone:
        return None
    body = tuple(s for i, s in enumerate(p.body) if i not in gone)
    for old in sub:
        new = _resolve(sub, old)
        body = tuple(rename(s, old, new) for s in body)
    outputs = tuple(dict.fromkeys(_resolve(sub, o) for o in p.outputs))
    return dce(dataclasses.replace(p, body=body, outputs=outputs))


def delete_chunks(case: Case) -> Iterator[Case]:
    """ddmin-style: delete runs of n/2, n/4, ... top-level statements, latest runs first."""
    p = case.program
    n = len(p.body)
    k = n // 2
    while k >= 2:
        for start in reversed(range(0, n, k)):
            prog = _bypass(p, range(start, min(start + k, n)))
            if prog is not None:
                yield with_program(case, body=prog.body, outputs=prog.outputs)
        k //= 2


def replace_by_input(case: Case) -> Iterator[Case]:
    """Replace one op by one of its tensor operands (any type: the reducer re-types)."""
    p = case.program
    for i in reversed(range(len(p.body))):
        s = p.body[i]
        if not isinstance(s, Assign):
            continue
        for name in dict.fromkeys(a.name for a in s.args if isinstance(a, Ref)):
            rest = tuple(rename(x, s.out, name) for x in p.body[i + 1:])
            outputs = tuple(dict.fromkeys(name if o == s.out else o for o in p.outputs))
            prog = dce(dataclasses.replace(p, body=p.body[:i] + rest, outputs=outputs))
            yield with_program(case, body=prog.body, outputs=prog.outputs)


def drop_unused_symbols(case: Case) -> Iterator[Case]:
    """Symbols no input shape mentions go, with their column of the call schedule."""
    p = case.program
    used = _used_symbols(p)
    keep = [j for j, s in enumerate(p.symbols) if s in used]
    if len(keep) < len(p.symbols):
        calls = tuple(dataclasses.replace(c, sizes=tuple(c.sizes[j] for j in keep)) for c in case.calls)
        yield dataclasses.replace(with_program(case, symbols=tuple(p.symbols[j] for j in keep)),
                                  calls=calls)


def concretise_symbols(case: Case) -> Iterator[Case]:
    """A symbol with one value in every call becomes that literal size (same tensors, fewer names)."""
    p = case.program
    for j, sym in enumerate(p.symbols):
        values = {c.sizes[j] for c in case.calls}
        if len(values) != 1 or any(isinstance(d, str) and d != sym and re.search(rf"\b{sym}\b", d)
                                   for i in p.inputs for d in i.type.shape) or \
                any(isinstance(d, str) and re.search(rf"\b{sym}\b", d) for sh in _state_shapes(p) for d in sh):
            continue  # a symbol the state's shapes use stays a symbol: only the inputs are rewritten
        value = values.pop()
        inputs = tuple(dataclasses.replace(i, type=TensorType(
            tuple(value if d == sym else d for d in i.type.shape), i.type.dtype)) for i in p.inputs)
        calls = tuple(dataclasses.replace(c, sizes=c.sizes[:j] + c.sizes[j + 1:]) for c in case.calls)
        yield dataclasses.replace(
            with_program(case, inputs=inputs, symbols=p.symbols[:j] + p.symbols[j + 1:]), calls=calls)


_MIN_RANK = {"transposed": 2, "channels_last": 4, "sliced": 1, "offset": 1, "expanded": 1}


def shrink_ranks(case: Case) -> Iterator[Case]:
    """Drop one dim of an input: size-1 dims first, then symbolic ones."""
    p = case.program
    for k, inp in enumerate(p.inputs):
        shape = inp.type.shape
        order = [j for j, d in enumerate(shape) if d == 1] + \
                [j for j, d in enumerate(shape) if d != 1]
        for j in order:
            new_shape = shape[:j] + shape[j + 1:]
            layout = inp.layout
            if len(new_shape) < _MIN_RANK.get(layout, 0) or layout == "channels_last":
                layout = "contiguous"
            new = dataclasses.replace(inp, type=TensorType(new_shape, inp.type.dtype), layout=layout)
            yield with_program(case, inputs=p.inputs[:k] + (new,) + p.inputs[k + 1:])


_CAST = re.compile(r"\.to\(torch\.(\w+)\)")


def simplify_dtypes(case: Case) -> Iterator[Case]:
    """Inputs and casts to float32, one at a time."""
    p = case.program
    for k, inp in enumerate(p.inputs):
        if inp.type.dtype != "float32":
            new = dataclasses.replace(inp, type=TensorType(inp.type.shape, "float32"))
            yield with_program(case, inputs=p.inputs[:k] + (new,) + p.inputs[k + 1:])
    for i, s in enumerate(p.body):
        if isinstance(s, Assign) and _CAST.search(s.template) and "float32" not in s.template:
            new = dataclasses.replace(s, template=_CAST.sub(".to(torch.float32)", s.template))
            yield with_program(case, body=p.body[:i] + (new,) + p.body[i + 1:])


def _simpler_literals(value) -> list:
    if isinstance(value, bool):
        return [False] if value else []
    if isinstance(value, int):
        return [0] if value else []
    if isinstance(value, float):
        return [x for x in (0.0, 1.0) if x != value and abs(x) < abs(value)]
    return []


def simplify_constants(case: Case) -> Iterator[Case]:
    """Literal arguments toward 0 / False (a dim argument becomes dim 0, keepdim False)."""
    p = case.program
    for i, s in enumerate(p.body):
        if not isinstance(s, (Assign, Mutate)):
            continue
        for a, arg in enumerate(s.args):
            if isinstance(arg, Lit):
                for v in _simpler_literals(arg.value):
                    new = dataclasses.replace(s, args=s.args[:a] + (Lit(v),) + s.args[a + 1:])
                    yield with_program(case, body=p.body[:i] + (new,) + p.body[i + 1:])


def constant_score(p: Program) -> int:
    score = 0
    for s in walk(p.body):
        for arg in getattr(s, "args", ()):
            if isinstance(arg, Lit) and isinstance(arg.value, (bool, int, float)):
                score += abs(int(arg.value)) + (isinstance(arg.value, float) and arg.value != 0.0)
    return score


_BIG, _FINE = ps.TIER_BIG, ps.TIER_FINE

TIERS: list[list[Pass]] = [
    [drop_outputs, drop_calls, drop_unused_symbols],
    [delete_chunks, delete_statements, replace_by_input, simplify_branches, retarget_outputs,
     dealias_inputs, drop_inputs, merge_inputs] + _BIG,
    [shrink_ranks, shrink_sizes, simplify_dtypes, simplify_inputs, simplify_options, simplify_constants,
     reseed_calls, concretise_symbols] + _FINE,
]


def size_of(case: Case) -> tuple:
    """A well-founded measure: every accepted candidate must make it smaller."""
    p = case.program
    n_stmts = sum(1 for _ in walk_program(p))
    rank = sum(len(i.type.shape) for i in p.inputs)
    total = sum(sum(c.sizes) for c in case.calls)
    dtypes = sum(i.type.dtype != "float32" for i in p.inputs) + \
        sum(1 for s in walk(p.body) if isinstance(s, Assign) and _CAST.search(s.template)
            and "float32" not in s.template)
    fancy = sum(i.layout != "contiguous" for i in p.inputs) + (case.compile.dynamic is not None) \
        + sum(i.kind == "alias" for i in p.inputs) \
        + case.compile.fullgraph + (case.compile.mode is not None) + schedule_fancy(case)
    seeds = sum(min(c.seed, 10**6) for c in case.calls)
    return (n_stmts + len(p.outputs) + len(p.inputs) + structure_weight(p), len(case.calls), rank,
            len(p.symbols), total, dtypes, fancy, constant_score(p), seeds)
