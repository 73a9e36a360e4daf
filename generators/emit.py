"""Program IR -> Python source. Pure: the same Program always gives the same text.

Contract: ``emit(program)`` returns the source of one function named
``program.name`` that takes the inputs in order and returns a tuple of the
outputs. The text depends only on the Program; nothing ever parses it back.
"""
from __future__ import annotations

from .ir import Arg, Assign, If, Lit, Mutate, Program, Ref, Size, Stmt

INDENT = "    "


def render_arg(arg: Arg) -> str:
    if isinstance(arg, Ref):
        return arg.name
    if isinstance(arg, Size):
        return f"{arg.var}.shape[{arg.dim}]"
    if isinstance(arg, Lit):
        return repr(arg.value)
    raise TypeError(f"not an argument: {arg!r}")


def render_stmt(stmt: Stmt, depth: int) -> list[str]:
    pad = INDENT * depth
    if isinstance(stmt, Assign):
        return [f"{pad}{stmt.out} = {stmt.template.format(*map(render_arg, stmt.args))}"]
    if isinstance(stmt, Mutate):
        return [f"{pad}{stmt.template.format(*map(render_arg, stmt.args))}"]
    if isinstance(stmt, If):
        c = stmt.cond
        lines = [f"{pad}if {c.var}.shape[{c.dim}] > {c.value}:"]
        lines += render_body(stmt.then, depth + 1)
        lines.append(f"{pad}else:")
        lines += render_body(stmt.orelse, depth + 1)
        return lines
    raise TypeError(f"not a statement: {stmt!r}")


def render_body(body: tuple[Stmt, ...], depth: int) -> list[str]:
    lines: list[str] = []
    for s in body:
        lines += render_stmt(s, depth)
    return lines or [INDENT * depth + "pass"]


def emit(program: Program) -> str:
    params = ", ".join(i.name for i in program.inputs)
    lines = [f"def {program.name}({params}):"]
    lines += [line for s in program.body for line in render_stmt(s, 1)]
    outs = ", ".join(program.outputs)
    lines.append(f"{INDENT}return ({outs},)" if len(program.outputs) == 1 else f"{INDENT}return ({outs})")
    return "\n".join(lines) + "\n"
