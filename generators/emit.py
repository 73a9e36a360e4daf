"""Program IR -> Python source. Pure: the same Program always gives the same text.

Contract: ``emit(program)`` returns the source of one self-contained module
text whose entry point is a function named ``program.name``: it takes the
inputs in order and returns the outputs (a tuple, a list, a dict with keys
``o0``, ``o1``... or a single tensor, per ``program.out_kind``). Before the
entry point it defines, in order: placeholders for the globals (set per call
by the runtime), helper functions, submodule classes, the ``Model`` class and
its instance ``MODEL`` (the entry point then calls ``MODEL``). A helper marked ``nested`` is
decorated with ``torch.compiler.nested_compile_region``. Parameters and
buffers are created as zeros: the runtime loads their values before each
call. The text depends only on the Program; nothing ever parses it back.
"""
from __future__ import annotations

from .ir import (Arg, Assign, CallFn, CondOp, DataCond, Function, If, Lit, Loop, ModuleDef,
                 Mutate, Program, Ref, Return, ScalarCond, Size, SizeCond, Stmt, While, With)

INDENT = "    "
MODEL_INSTANCE = "MODEL"


def render_arg(arg: Arg) -> str:
    if isinstance(arg, Ref):
        return arg.name
    if isinstance(arg, Size):
        return f"{arg.var}.shape[{arg.dim}]"
    if isinstance(arg, Lit):
        return repr(arg.value)
    raise TypeError(f"not an argument: {arg!r}")


def render_cond(c) -> str:
    if isinstance(c, SizeCond):
        return f"{c.var}.shape[{c.dim}] > {c.value}"
    if isinstance(c, DataCond):
        if c.kind == "any":
            return f"({c.var} > {c.value!r}).any()"
        return f"int(({c.var} > {c.value!r}).sum().item()) % 2 == 1"
    if isinstance(c, ScalarCond):
        return f"{c.name} > {c.value}"
    raise TypeError(f"not a condition: {c!r}")


def render_return(values: tuple[str, ...], out_kind: str) -> str:
    if out_kind == "single" and len(values) == 1:
        return f"return {values[0]}"
    if out_kind == "list":
        return f"return [{', '.join(values)}]"
    if out_kind == "dict":
        return "return {" + ", ".join(f"'o{k}': {v}" for k, v in enumerate(values)) + "}"
    return f"return ({values[0]},)" if len(values) == 1 else f"return ({', '.join(values)})"


def render_stmt(stmt: Stmt, depth: int, out_kind: str = "tuple") -> list[str]:
    pad = INDENT * depth
    if isinstance(stmt, Assign):
        return [f"{pad}{stmt.out} = {stmt.template.format(*map(render_arg, stmt.args))}"]
    if isinstance(stmt, Mutate):
        return [f"{pad}{stmt.template.format(*map(render_arg, stmt.args))}"]
    if isinstance(stmt, CallFn):
        return [f"{pad}{stmt.out} = {stmt.fn}({', '.join(map(render_arg, stmt.args))})"]
    if isinstance(stmt, CondOp):
        ops = ", ".join(stmt.operands) + ("," if len(stmt.operands) == 1 else "")
        return [f"{pad}{stmt.out} = torch.cond({render_cond(stmt.pred)}, {stmt.true_fn}, "
                f"{stmt.false_fn}, ({ops}))"]
    if isinstance(stmt, Return):
        return [pad + render_return(stmt.values, out_kind)]
    if isinstance(stmt, If):
        lines = [f"{pad}if {render_cond(stmt.cond)}:"]
        lines += render_body(stmt.then, depth + 1, out_kind)
        if stmt.orelse:
            lines.append(f"{pad}else:")
            lines += render_body(stmt.orelse, depth + 1, out_kind)
        return lines
    if isinstance(stmt, Loop):
        if stmt.kind == "range":
            head = f"range({stmt.count})"
        elif stmt.kind == "tuple":
            head = "(" + ", ".join(stmt.items) + ("," if len(stmt.items) == 1 else "") + ")"
        elif stmt.kind == "dict":
            head = f"{stmt.items[0]}.values()"
        else:
            head = stmt.items[0]
        return [f"{pad}for {stmt.index} in {head}:"] + render_body(stmt.body, depth + 1, out_kind)
    if isinstance(stmt, While):
        inner = INDENT * (depth + 1)
        return ([f"{pad}{stmt.counter} = {stmt.var}.shape[{stmt.dim}]", f"{pad}while {stmt.counter} > 1:"]
                + render_body(stmt.body, depth + 1, out_kind)
                + [f"{inner}{stmt.counter} = {stmt.counter} // 2"])
    if isinstance(stmt, With):
        head = ('torch.autocast("cpu", dtype=torch.bfloat16)' if stmt.kind == "autocast"
                else 'torch.autocast("cpu", enabled=False)')
        return [f"{pad}with {head}:"] + render_body(stmt.body, depth + 1, out_kind)
    raise TypeError(f"not a statement: {stmt!r}")


def render_body(body: tuple[Stmt, ...], depth: int, out_kind: str = "tuple") -> list[str]:
    lines: list[str] = []
    for s in body:
        lines += render_stmt(s, depth, out_kind)
    return lines or [INDENT * depth + "pass"]


def _function(f: Function, depth: int, method: bool = False) -> list[str]:
    params = ", ".join((["self"] if method else []) + [n for n, _ in f.params])
    pad = INDENT * depth
    deco = [f"{pad}@torch.compiler.nested_compile_region"] if f.nested else []
    return (deco + [f"{pad}def {f.name}({params}):"] + render_body(f.body, depth + 1)
            + [f"{pad}{INDENT}return {f.result}"])


def _tensor_ctor(t) -> str:
    return f"torch.zeros({tuple(t.shape)!r}, dtype=torch.{t.dtype})"


def _module_class(m: ModuleDef, forward_lines: list[str]) -> list[str]:
    lines = [f"class {m.cls}(torch.nn.Module):", f"{INDENT}def __init__(self):",
             f"{INDENT * 2}super().__init__()"]
    for st in m.state:
        if st.kind == "param":
            frozen = "" if st.requires_grad else ", requires_grad=False"
            lines.append(f"{INDENT * 2}self.{st.name} = torch.nn.Parameter({_tensor_ctor(st.type)}{frozen})")
        else:
            lines.append(f"{INDENT * 2}self.register_buffer({st.name!r}, {_tensor_ctor(st.type)})")
    for attr, sub in m.submodules:
        lines.append(f"{INDENT * 2}self.{attr} = {sub.cls}()")
    for attr, ctor in m.library:
        lines.append(f"{INDENT * 2}self.{attr} = {ctor}")
    return lines + [""] + forward_lines + ["", ""]


def _classes(m: ModuleDef) -> list[str]:
    lines: list[str] = []
    for _attr, sub in m.submodules:
        lines += _classes(sub)
    if m.forward is not None:
        lines += _module_class(m, _function(m.forward, 1, method=True))
    return lines


def emit(program: Program) -> str:
    p = program
    params = ", ".join(i.name for i in p.inputs)
    lines: list[str] = []
    for g in p.globals:
        lines.append(f"{g.name} = None  # {g.kind} global: the runtime sets it before each call")
    if p.globals:
        lines += ["", ""]
    for f in p.helpers:
        lines += _function(f, 0) + ["", ""]
    body = render_body(p.body, 2 if p.module else 1, p.out_kind)
    ret = render_return(p.outputs, p.out_kind)
    if p.module is not None:
        lines += _classes(p.module)
        fwd = [f"{INDENT}def forward(self{', ' if params else ''}{params}):"] + body + [INDENT * 2 + ret]
        lines += _module_class(p.module, fwd)
        lines += [f"{MODEL_INSTANCE} = {p.module.cls}()", "", ""]
        lines += [f"def {p.name}({params}):", f"{INDENT}return {MODEL_INSTANCE}({params})"]
    else:
        lines += [f"def {p.name}({params}):"] + body + [INDENT + ret]
    return "\n".join(lines) + "\n"
