"""IR edits the reduction passes share: rename a value, drop dead statements, count helper calls,
weigh a program's structure.

Contract: pure functions of the IR. ``rename(stmt, old, new)`` renames one value in a statement;
``dce(program)`` drops statements no output depends on (and helpers nobody calls; it lives
in ``fuzzcomp.generators.liveness``, which attribution uses too, and is importable here);
``structure_weight(p)`` and ``schedule_fancy(case)`` are the structure terms of the minimiser's
size measure. ``passes`` and ``passes_structure`` both build on these and never import each other
for them.
"""
from __future__ import annotations

import dataclasses

from fuzzcomp.generators.ir import (Assign, CallFn, Case, CondOp, DataCond, If, Loop, Mutate, Program,
                                    Ref, Return, ScalarCond, Size, SizeCond, Stmt, While, With)
# liveness is the IR's own (attribution names live statements too): these names stay importable here
from fuzzcomp.generators.liveness import calls_to as _calls_to, dce, drop_dead_helpers, has as _has  # noqa: F401


def with_program(case: Case, **changes) -> Case:
    """``case`` with its program's fields replaced. Where the inputs change, each call's dynamic
    marks and requires_grad names keep only inputs that still exist (a mark on a dropped input
    made the short repro call ``mark_dynamic`` on an undefined name)."""
    prog = dataclasses.replace(case.program, **changes)
    if "inputs" not in changes:
        return dataclasses.replace(case, program=prog)
    names = {i.name for i in prog.inputs}
    calls = tuple(dataclasses.replace(
        c, marks=tuple(m for m in c.marks if m[0] in names),
        requires_grad=None if c.requires_grad is None else tuple(n for n in c.requires_grad if n in names))
        for c in case.calls)
    return dataclasses.replace(case, program=prog, calls=calls)


def _rename_arg(a, old: str, new: str):
    if isinstance(a, Ref) and a.name == old:
        return Ref(new)
    if isinstance(a, Size) and a.var == old:
        return Size(new, a.dim)
    return a


def _rename_cond(c, old: str, new: str):
    if isinstance(c, (SizeCond, DataCond)) and c.var == old:
        return dataclasses.replace(c, var=new)
    if isinstance(c, ScalarCond) and c.name == old:
        return dataclasses.replace(c, name=new)
    return c


def rename(stmt: Stmt, old: str, new: str) -> Stmt:
    """Rename the reads of ``old`` (never a definition) in one statement, nested blocks included."""
    sub = lambda n: new if n == old else n  # noqa: E731
    block = lambda b: tuple(rename(x, old, new) for x in b)  # noqa: E731
    if isinstance(stmt, Assign):
        return dataclasses.replace(stmt, args=tuple(_rename_arg(a, old, new) for a in stmt.args))
    if isinstance(stmt, Mutate):
        return dataclasses.replace(stmt, target=sub(stmt.target),
                                   args=tuple(_rename_arg(a, old, new) for a in stmt.args))
    if isinstance(stmt, CallFn):
        return dataclasses.replace(stmt, args=tuple(_rename_arg(a, old, new) for a in stmt.args))
    if isinstance(stmt, CondOp):
        return dataclasses.replace(stmt, pred=_rename_cond(stmt.pred, old, new),
                                   operands=tuple(map(sub, stmt.operands)))
    if isinstance(stmt, Return):
        return dataclasses.replace(stmt, values=tuple(map(sub, stmt.values)))
    if isinstance(stmt, If):
        return dataclasses.replace(stmt, cond=_rename_cond(stmt.cond, old, new), then=block(stmt.then),
                                   orelse=block(stmt.orelse))
    if isinstance(stmt, Loop):
        count = sub(stmt.count) if isinstance(stmt.count, str) else stmt.count
        return dataclasses.replace(stmt, count=count, items=tuple(map(sub, stmt.items)), body=block(stmt.body))
    if isinstance(stmt, While):
        return dataclasses.replace(stmt, var=sub(stmt.var), body=block(stmt.body))
    if isinstance(stmt, With):
        return dataclasses.replace(stmt, body=block(stmt.body))
    raise TypeError(f"not a statement: {stmt!r}")


def _modules(p: Program):
    if p.module is None:
        return []
    out, todo = [], [p.module]
    while todo:
        m = todo.pop()
        out.append(m)
        todo += [sub for _a, sub in m.submodules]
    return out


def structure_weight(p: Program) -> int:
    """Size contributed by structure outside the statements themselves."""
    state = sum(len(m.state) for m in _modules(p))
    return (2 * state + (p.module is not None) + len(p.helpers)
            + sum(2 if g.kind == "tensor" else 1 for g in p.globals))


def schedule_fancy(case: Case) -> int:
    n = sum((c.grad_mode != "grad") + c.inference_inputs + bool(c.requires_grad) + len(c.marks)
            for c in case.calls)
    return n + (case.program.out_kind != "tuple")
