"""Which branches a case's calls take: its program with the branches no call takes emptied.

Contract: ``taken_program(case)`` returns the case's program in which every if-statement of the
main body whose condition can be evaluated from a call's inputs alone (a size, the data of an
input or global the program never writes, a scalar argument or global) keeps only the branches
some call reaches and takes; a branch no call takes is emptied. It is read (for a finding's
identity: which ops and markers its calls execute), never emitted or run. A condition on
anything else (an intermediate, module state, a helper's parameter), on an input some statement
writes, or one that fails to evaluate keeps both branches: the answer errs towards the whole
program. No program code runs: only the calls' inputs are built (``_Runner.inputs``), so the
campaign's main process can ask it. Any failure returns the program unchanged.

Why: an op in a branch no call runs is no part of what the compiler got wrong, yet the
known-bug registry's rules read ops and markers. CPU 1512's ``Tensor.add_`` in an untaken
``else`` put a resume-graph crash under another entry's rule.
"""
from __future__ import annotations

import dataclasses

import torch

from fuzzcomp.generators.emit import render_cond
from fuzzcomp.generators.ops_view import VIEW_OPS
from fuzzcomp.generators.ir import (Assign, CallFn, DataCond, If, Loop, Mutate, Program, Ref, ScalarCond,
                                    SizeCond, While, With, walk)

_UNKNOWN = "unknown"


def written_roots(program: Program) -> set[str]:
    """Names of inputs and globals some statement of the program may write in place: a write's
    target traced back through views, the arguments of a helper call (a helper may write its
    parameters), and both sides of an aliased input pair."""
    root: dict[str, str] = {}
    out: set[str] = set()
    for st in walk(program.body):
        if isinstance(st, Assign) and st.op in VIEW_OPS and st.args and isinstance(st.args[0], Ref):
            root[st.out] = root.get(st.args[0].name, st.args[0].name)
        elif isinstance(st, Mutate):
            out.add(root.get(st.target, st.target))
        elif isinstance(st, CallFn):
            out |= {root.get(a.name, a.name) for a in st.args if isinstance(a, Ref)}
    for i in program.inputs:
        if i.kind == "alias" and (i.name in out or i.alias_of in out):
            out |= {i.name, i.alias_of}
    return out


def _verdict(cond, env: dict, written: set[str]):
    """True/False for the branch a call takes, or _UNKNOWN."""
    if isinstance(cond, DataCond) and cond.var in written:
        return _UNKNOWN
    name = cond.name if isinstance(cond, ScalarCond) else cond.var
    if name not in env or not isinstance(cond, (SizeCond, DataCond, ScalarCond)):
        return _UNKNOWN
    try:
        with torch.no_grad():
            return bool(eval(render_cond(cond), {"torch": torch}, env))  # noqa: S307 (our own IR)
    except Exception:
        return _UNKNOWN


def _visit(body, env: dict, written: set[str], taken: dict) -> None:
    """Record, per If statement (by id), which branches this call takes, for every If it reaches."""
    for st in body:
        if isinstance(st, If):
            v = _verdict(st.cond, env, written)
            seen = taken.setdefault(id(st), set())
            for branch, block in ((True, st.then), (False, st.orelse)):
                if v is _UNKNOWN or v is branch:
                    seen.add(branch)
                    _visit(block, env, written, taken)
        elif isinstance(st, (Loop, While, With)):
            _visit(st.body, env, written, taken)


def _pruned(body, taken: dict):
    out = []
    for st in body:
        if isinstance(st, If):
            seen = taken.get(id(st), set())
            st = dataclasses.replace(st, then=_pruned(st.then, taken) if True in seen else (),
                                     orelse=_pruned(st.orelse, taken) if False in seen else ())
        elif isinstance(st, (Loop, While, With)):
            st = dataclasses.replace(st, body=_pruned(st.body, taken))
        out.append(st)
    return tuple(out)


def taken_program(case) -> Program:
    """The case's program without the branches none of its calls takes (see the module doc)."""
    program = case.program
    if not any(isinstance(s, If) for s in walk(program.body)):
        return program
    try:
        from fuzzcomp.run.execute import DEFAULT_OPTIONS, _Runner
        runner = _Runner(case, dataclasses.replace(DEFAULT_OPTIONS, aliases=False))
        written = written_roots(program)
        taken: dict = {}
        for call in case.calls:
            inputs = runner.inputs(call)
            env = {k: v for k, v in runner.namespace.items() if not k.startswith("__")}
            env.update(zip(runner.names, inputs))
            env.update(dict(call.scalars))
            env.update(dict(call.globals))
            _visit(program.body, env, written, taken)
        return dataclasses.replace(program, body=_pruned(program.body, taken))
    except Exception:  # noqa: BLE001: the whole program is the safe answer
        return program
