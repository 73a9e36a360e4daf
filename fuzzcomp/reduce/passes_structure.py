"""Reduction passes for program structure and call state (see ``passes`` for the contract).

Each pass is ``Case -> Iterator[Case]`` yielding strictly smaller candidates by
``passes.size_of``; none runs anything. They unwrap loops and with-blocks,
inline helpers, submodules and ``torch.cond``, turn a module into a plain
function (parameters and buffers become inputs), replace Python scalar
arguments and scalar globals by literals, turn tensor globals into inputs,
and reset per-call state (grad mode, requires_grad, marks) and the output
container to their defaults.
"""
from __future__ import annotations

import dataclasses
from typing import Iterator

from fuzzcomp.generators.ir import (Assign, CallFn, Case, CondOp, If, Input, Lit, Loop, Program, Ref,
                                    ScalarCond, Stmt, TensorType, While, With, children, refs_of)

from fuzzcomp.reduce.ir_edits import _calls_to, _modules, dce, rename, with_program, schedule_fancy, structure_weight  # noqa: F401  (re-exported)



def _map_bodies(p: Program, fn) -> Program:
    """Apply ``fn(body) -> body`` to the main body and every block inside it, bottom up."""
    def rec(body):
        out = []
        for s in body:
            if isinstance(s, If):
                s = dataclasses.replace(s, then=rec(s.then), orelse=rec(s.orelse))
            elif isinstance(s, (Loop, While, With)):
                s = dataclasses.replace(s, body=rec(s.body))
            out.append(s)
        return fn(tuple(out))
    return dataclasses.replace(p, body=rec(p.body))


def _rename_all(body, old: str, new: str):
    return tuple(rename(s, old, new) for s in body)


def _unwrap(s: Stmt) -> tuple[Stmt, ...] | None:
    if isinstance(s, With):
        return s.body
    if isinstance(s, While):
        return s.body
    if isinstance(s, Loop):
        if s.kind == "range":  # bind the Python index to its first value (a non-tensor type)
            used = any(s.index in refs_of(x) for x in s.body)
            first = (Assign(s.index, "loop:index", "0", (), TensorType((), "pyint")),) if used else ()
            return first + s.body
        if s.kind == "tuple":
            return _rename_all(s.body, s.index, s.items[0])
        key = "'k0'" if s.kind == "dict" else "0"
        t = s.item_type
        if t is None:
            return None
        return (Assign(s.index, "container:getitem", "{0}[%s]" % key, (Ref(s.items[0]),), t),) + s.body
    return None


def unwrap_blocks(case: Case) -> Iterator[Case]:
    """Replace one loop, while-loop or with-block by its body, run once."""
    p = case.program
    for i, s in enumerate(p.body):
        inner = _unwrap(s)
        if inner is not None:
            prog = dce(dataclasses.replace(p, body=p.body[:i] + inner + p.body[i + 1:]))
            yield with_program(case, body=prog.body)


def _inline_call(p: Program, i: int, fn_body, params, result: str, rename_state=None) -> Program:
    s = p.body[i]
    body = fn_body
    for (pname, _t), arg in zip(params, s.args):
        body = _rename_all(body, pname, arg.name if isinstance(arg, Ref) else pname)
    if rename_state:
        for old, new in rename_state:
            body = _rename_all(body, old, new)
    res = dict(rename_state or ()).get(result, result)
    for (pname, _t), arg in zip(params, s.args):
        if res == pname and isinstance(arg, Ref):
            res = arg.name
    rest = _rename_all(p.body[i + 1:], s.out, res)
    outputs = tuple(res if o == s.out else o for o in p.outputs)
    return dataclasses.replace(p, body=p.body[:i] + body + rest, outputs=outputs)



def _prune(p: Program) -> Program:
    """Drop helpers and submodules nobody calls any more."""
    p = dce(p)
    helpers = tuple(f for f in p.helpers if _calls_to(p, f.name))
    module = p.module
    if module is not None:
        names = set().union(*(refs_of(s) for s in p.body)) if p.body else set()
        subs = tuple((a, m) for a, m in module.submodules
                     if _calls_to(p, f"self.{a}") or any(n.startswith(f"self.{a}.") for n in names))
        module = dataclasses.replace(module, submodules=subs)
    return dataclasses.replace(p, helpers=helpers, module=module)


def inline_calls(case: Case) -> Iterator[Case]:
    """Inline a top-level helper or submodule call; replace ``torch.cond`` by one branch's call."""
    p = case.program
    helpers = {f.name: f for f in p.helpers}
    subs = {f"self.{a}": m for a, m in (p.module.submodules if p.module else ())}
    for i, s in enumerate(p.body):
        if isinstance(s, CallFn) and s.fn in helpers and _calls_to(p, s.fn) == 1:
            f = helpers[s.fn]
            yield with_program(case, **_fields(_prune(_inline_call(p, i, f.body, f.params, f.result))))
        elif isinstance(s, CallFn) and s.fn in subs and _calls_to(p, s.fn) == 1:
            m = subs[s.fn]
            f = m.forward
            state = [(f"self.{st.name}", f"{s.fn}.{st.name}") for st in m.state]
            yield with_program(case, **_fields(_prune(_inline_call(p, i, f.body, f.params, f.result, state))))
        elif isinstance(s, CondOp):
            for branch in (s.true_fn, s.false_fn):
                call = CallFn(s.out, branch, tuple(Ref(n) for n in s.operands), s.type)
                prog = _prune(dataclasses.replace(p, body=p.body[:i] + (call,) + p.body[i + 1:]))
                yield with_program(case, **_fields(prog))


def _fields(p: Program) -> dict:
    return {f.name: getattr(p, f.name) for f in dataclasses.fields(p)}


def demodularise(case: Case) -> Iterator[Case]:
    """A module without submodules becomes a plain function: its state becomes inputs."""
    p = case.program
    m = p.module
    if m is None or m.submodules:
        return
    for grad in (False, True):
        body, outputs, extra = p.body, p.outputs, []
        for st in m.state:
            name = f"m_{st.name}"
            body = _rename_all(body, f"self.{st.name}", name)
            outputs = tuple(name if o == f"self.{st.name}" else o for o in outputs)
            extra.append(Input(name, st.type, requires_grad=grad and st.kind == "param" and st.requires_grad))
        if grad and not any(i.requires_grad for i in extra):
            continue
        yield with_program(case, body=body, outputs=outputs, module=None, inputs=p.inputs + tuple(extra))


def _literal_body(body, name: str, value):
    """Replace reads of a Python scalar ``name`` by ``value``; resolve conditions on it."""
    out = []
    for s in body:
        if isinstance(s, If) and isinstance(s.cond, ScalarCond) and s.cond.name == name:
            out += list(_literal_body(s.then if value > s.cond.value else s.orelse, name, value))
            continue
        if isinstance(s, (Assign, CallFn)):
            s = dataclasses.replace(s, args=tuple(Lit(value) if isinstance(a, Ref) and a.name == name else a
                                                  for a in s.args))
        elif isinstance(s, Loop) and s.count == name:
            s = dataclasses.replace(s, count=value)
        if children(s):
            if isinstance(s, If):
                s = dataclasses.replace(s, then=_literal_body(s.then, name, value),
                                        orelse=_literal_body(s.orelse, name, value))
            else:
                s = dataclasses.replace(s, body=_literal_body(s.body, name, value))
        out.append(s)
    return tuple(out)


def drop_scalars(case: Case) -> Iterator[Case]:
    """A scalar argument or scalar global becomes the literal it had on the first call."""
    p = case.program
    first = case.calls[0]
    for k, inp in enumerate(p.inputs):
        if inp.kind in ("int", "float"):
            value = dict(first.scalars).get(inp.name, 0)
            calls = tuple(dataclasses.replace(c, scalars=tuple(x for x in c.scalars if x[0] != inp.name))
                          for c in case.calls)
            prog = dataclasses.replace(p, body=_literal_body(p.body, inp.name, value),
                                       inputs=p.inputs[:k] + p.inputs[k + 1:])
            yield dataclasses.replace(case, program=prog, calls=calls)
    for k, g in enumerate(p.globals):
        rest = p.globals[:k] + p.globals[k + 1:]
        if g.kind == "tensor":  # the global becomes an argument of the same name
            yield with_program(case, globals=rest, inputs=p.inputs + (Input(g.name, g.type),))
            continue
        value = dict(first.globals).get(g.name, 0)
        calls = tuple(dataclasses.replace(c, globals=tuple(x for x in c.globals if x[0] != g.name))
                      for c in case.calls)
        prog = dataclasses.replace(p, body=_literal_body(p.body, g.name, value), globals=rest)
        yield dataclasses.replace(case, program=prog, calls=calls)


def simplify_schedule(case: Case) -> Iterator[Case]:
    """Per-call state back to defaults, one kind at a time; outputs back to a tuple."""
    resets = (dict(grad_mode="grad", inference_inputs=False), dict(inference_inputs=False),
              dict(requires_grad=()), dict(marks=()))
    for r in resets:
        cand = dataclasses.replace(case, calls=tuple(dataclasses.replace(c, **r) for c in case.calls))
        if schedule_fancy(cand) < schedule_fancy(case):
            yield cand
    p = case.program
    if p.out_kind != "tuple":
        yield with_program(case, out_kind="tuple")


TIER_BIG = [unwrap_blocks, inline_calls, demodularise, drop_scalars]
TIER_FINE = [simplify_schedule]
