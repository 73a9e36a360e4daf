"""Knock-outs: a finding's program without what a known-bug rule says the bug needs.

Contract: ``knockouts(case, needs)`` takes the rule's needs (its ``ops_all`` globs, each a need
of its own, and its ``ops_any`` globs, one need together; ``input:*`` markers as the registry
names them) and returns one case per need: the original with every statement of the main body,
at any depth, whose op the need names knocked out (an assignment becomes a copy of its first
tensor operand, ``out = a.clone()``, so names, regions and joins stay as they were; an in-place
write is deleted), re-typed on meta tensors. ``input:written`` deletes the writes into inputs
and their views, ``resume:written`` the writes after a graph break into values computed before
it, ``input:alias`` makes an aliased input a tensor of its own, ``input:expanded``
makes expanded inputs contiguous, ``region:nested`` makes each ``nested_compile_region`` helper a
plain function (Dynamo inlines it); other markers are properties of the inputs the check cannot
undo and are skipped. The result is None, meaning "cannot tell this way", when a named
statement cannot go (it sits in a helper or a module's forward, or has no tensor operand), a
knock-out does not type-check, or the rule names nothing to knock out.

The caller probes each knock-out: a finding is the entry's bug when every knock-out loses it
(each need is necessary), and news when one keeps it. One compile per need replaces a whole
label-check minimisation; the minimiser is never asked. ``sliced(case, outputs)`` keeps only
the outputs a verdict names and what computes them, so a rival entry whose ops feed only other
outputs can be told apart.
"""
from __future__ import annotations

import dataclasses

from fuzzcomp.findings.known import input_writes, op_matches, resume_writes
from fuzzcomp.generators.ir import Assign, Case, Mutate, Ref, walk, walk_program
from fuzzcomp.reduce.ir_edits import dce, with_program
from fuzzcomp.reduce.passes_structure import _map_bodies
from fuzzcomp.reduce.typecheck import retype

#: markers a knock-out can undo; the registry's other markers describe inputs it cannot change
UNDOABLE = ("input:written", "resume:written", "input:alias", "input:expanded", "region:nested")
_WRITES = {"input:written": input_writes, "resume:written": resume_writes}


def needs_of(ops_all, ops_any) -> list[tuple[str, ...]]:
    """A rule's needs, each a tuple of globs any of which satisfies it."""
    out = [(g,) for g in ops_all if not g.startswith("input:") or g in UNDOABLE]
    ops = tuple(g for g in ops_any if not g.startswith("input:"))
    return out + [ops] if ops else out


def _matches(op: str, globs) -> bool:
    op = op.removeprefix("branch:")
    return any(op_matches(op, g) for g in globs)


class _CannotGo(Exception):
    """A named statement has no tensor operand to stand in for it."""


def _without(case: Case, drop_assign, drop_mutate) -> Case:
    """The main body, at every depth, with each matching write deleted and each matching
    assignment replaced by a copy of its first tensor operand (names and regions unchanged)."""
    def fn(body):
        out = []
        for s in body:
            if isinstance(s, Mutate) and drop_mutate(s):
                continue
            if isinstance(s, Assign) and drop_assign(s):
                operand = next((a for a in s.args if isinstance(a, Ref)), None)
                if operand is None:
                    raise _CannotGo(s.op)
                s = Assign(s.out, "Tensor.clone", "{0}.clone()", (operand,), s.type)
            out.append(s)
        return tuple(out)
    prog = _map_bodies(case.program, fn)
    return with_program(case, body=prog.body)


def knock_out(case: Case, globs: tuple[str, ...]) -> Case | None:
    """The case without ``globs`` (ops or one undoable marker), re-typed; None if it cannot."""
    p = case.program
    if globs == ("input:alias",):
        if not any(i.kind == "alias" for i in p.inputs):
            return None
        cand = with_program(case, inputs=tuple(dataclasses.replace(i, kind="tensor", alias_of=None)
                                                if i.kind == "alias" else i for i in p.inputs))
    elif globs == ("region:nested",):
        if not any(f.nested for f in p.helpers):
            return None
        return with_program(case, helpers=tuple(dataclasses.replace(f, nested=False) for f in p.helpers))
    elif globs == ("input:expanded",):
        if not any(i.kind == "tensor" and i.layout == "expanded" for i in p.inputs):
            return None
        cand = with_program(case, inputs=tuple(dataclasses.replace(i, layout="contiguous")
                                                if i.kind == "tensor" and i.layout == "expanded" else i
                                                for i in p.inputs))
    else:
        finder = _WRITES.get(globs[0]) if len(globs) == 1 else None  # a write marker, or ops
        if finder is not None:
            writes = finder(p)
            drop_a, drop_m = (lambda s: False), (lambda s: s in writes)
        else:
            drop_a = drop_m = (lambda s: _matches(s.op, globs))
        if not any(isinstance(s, (Assign, Mutate)) and (drop_a(s) if isinstance(s, Assign) else drop_m(s))
                   for s in walk(p.body)):
            return None  # nothing in the main body to knock out (in a helper or module only)
        try:
            cand = _without(case, drop_a, drop_m)
        except _CannotGo:
            return None
        left = finder(cand.program) if finder is not None else [
            s for s in walk_program(cand.program) if isinstance(s, (Assign, Mutate)) and _matches(s.op, globs)]
        if left:
            return None  # a named op survives (in a helper or a module's forward), or a write does
    if retype(p) is None:  # the original is not modelled on meta tensors: the probe decides
        return cand
    typed = retype(cand.program)
    return None if typed is None else dataclasses.replace(cand, program=typed)


def knock_out_all(case: Case, needs: list[tuple[str, ...]]) -> Case | None:
    """The case without every one of ``needs`` at once (None when one of them cannot go)."""
    for globs in needs:
        case = knock_out(case, globs)
        if case is None:
            return None
    return case if needs else None


def knockouts(case: Case, needs: list[tuple[str, ...]]) -> list[Case] | None:
    """One knock-out per need, or None when any need cannot be knocked out (or there is none)."""
    if not needs:
        return None
    out = []
    for globs in needs:
        cand = knock_out(case, globs)
        if cand is None:
            return None
        out.append(cand)
    return out


def sliced(case: Case, outputs: tuple[int, ...]) -> Case | None:
    """The case returning only ``outputs`` (indices, kept in the program's order), without the
    statements and helpers that nothing left reads (in-place writes stay); None when that leaves
    nothing out."""
    p = case.program
    keep = tuple(dict.fromkeys(name for i, name in enumerate(p.outputs) if i in outputs))
    if not keep:
        return None
    prog = dce(dataclasses.replace(p, outputs=keep))
    if prog.body == p.body and prog.helpers == p.helpers and keep == p.outputs:
        return None
    return with_program(case, body=prog.body, helpers=prog.helpers, outputs=keep)
