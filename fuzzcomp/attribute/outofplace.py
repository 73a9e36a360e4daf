"""A program's in-place writes replaced by out-of-place forms: the in-place functional twin.

Contract: ``out_of_place(program)`` returns the program with no tensor write reaching a tensor
that existed before it, or None when the program writes nothing in place. A write that is one
in-place method call on its target (``x.add_(y)``, ``x.unsqueeze_(0)``) becomes that method's
out-of-place form rebinding the name (``x = x.add(y)``); any other write (through a view,
by index, ``out=``, a chain of calls, a method without an out-of-place twin) first rebinds its
target to a copy (``x = x.clone()``), so only the copy changes. A module attribute
(``self.buf0``) or a global is never rebound: its write goes to a local copy instead. The program's writes
of torch's global state (``state:*``) are not tensor writes and stay.

The result is a twin for compile counts only: later reads see the written values where the name
is rebound, but aliases taken before the write no longer do, and types are not re-checked (the
twin is emitted and run, never typed or reduced).
"""
from __future__ import annotations

import dataclasses
import re

import torch

from fuzzcomp.generators.ir import Assign, If, Loop, Mutate, Program, Ref, TensorType, While, With, walk_program

_METHOD = re.compile(r"\{0\}\.([A-Za-z][A-Za-z0-9_]*)_\(")
_ANY = TensorType((), "float32")   # a placeholder type: the twin is never typed


def _closing(text: str, start: int) -> int:
    """Index of the parenthesis closing the one at ``start`` (-1 if unbalanced)."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return -1


def _simple_method(template: str) -> str | None:
    """``name`` when the template is exactly ``{0}.name_(...)`` and Tensor has ``name``."""
    m = _METHOD.match(template)
    if m is None or _closing(template, m.end() - 1) != len(template) - 1:
        return None
    name = m.group(1)
    return name if hasattr(torch.Tensor, name) and not name.startswith("_") else None


def _types(program: Program) -> dict[str, TensorType]:
    out = {i.name: i.type for i in program.inputs}
    if program.module is not None:
        out.update({f"self.{s.name}": s.type for s in program.module.state})
    for s in walk_program(program):
        if hasattr(s, "out") and hasattr(s, "type"):
            out[s.out] = s.type
    return out


class _Rewrite:
    def __init__(self, program: Program):
        self.types = _types(program)
        self.globals = {g.name for g in program.globals}
        self.count = 0

    def stmt(self, s) -> list:
        if not isinstance(s, Mutate) or not s.target or s.op.startswith("state:"):
            return [self.nested(s)]
        self.count += 1
        t = self.types.get(s.target, _ANY)
        if "." in s.target or s.target in self.globals:  # write into a local copy, never rebind it
            local = f"_twin{self.count}"
            args = tuple(Ref(local) if a == Ref(s.target) else a for a in s.args)
            return [Assign(local, "clone", "{0}.clone()", (Ref(s.target),), t),
                    dataclasses.replace(s, target=local, args=args)]
        name = _simple_method(s.template)
        if name is not None:
            template = s.template.replace(f"{{0}}.{name}_(", f"{{0}}.{name}(", 1)
            return [Assign(s.target, f"{s.op}[out-of-place]", template, s.args, t)]
        return [Assign(s.target, "clone", "{0}.clone()", (Ref(s.target),), t), s]

    def nested(self, s):
        if isinstance(s, If):
            return dataclasses.replace(s, then=self.body(s.then), orelse=self.body(s.orelse))
        if isinstance(s, (Loop, While, With)):
            return dataclasses.replace(s, body=self.body(s.body))
        return s

    def body(self, stmts) -> tuple:
        return tuple(x for s in stmts for x in self.stmt(s))

    def function(self, f):
        return None if f is None else dataclasses.replace(f, body=self.body(f.body))

    def module(self, m):
        subs = tuple((attr, self.module(sub)) for attr, sub in m.submodules)
        return dataclasses.replace(m, submodules=subs, forward=self.function(m.forward))


def out_of_place(program: Program) -> Program | None:
    r = _Rewrite(program)
    out = dataclasses.replace(program, body=r.body(program.body),
                              helpers=tuple(r.function(f) for f in program.helpers),
                              module=None if program.module is None else r.module(program.module))
    return out if r.count else None
