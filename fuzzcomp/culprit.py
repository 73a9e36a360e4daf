"""The culprit op of a value finding: what splits numeric, gradient and mutation buckets.

Contract: ``culprit_of(case, obs, verdict, options, deep)`` returns a short
signature naming one op of the program, cheap to get and stable across
programs that show the same bug:

* ``deep`` (the case's primary verdict, numeric or mutation): one extra
  compile of a variant of the program that also returns every top-level
  intermediate; each intermediate is judged with the fp64 rule, and the first
  one (in program order) whose compiled value leaves eager's names the op;
* otherwise, or when the variant hides the bug (every intermediate agrees,
  the variant cannot be built, or it fails to run): the op that last wrote the
  mismatching value, and for a gradient the first op that reads the input.

Both ways the signature is ``"culprit op: NAME"``: when no intermediate
diverges but the output does, the output's writer is the first diverging op,
so the two ways agree on one bug. ``obs.stats["culprit"]`` says which way
was taken.
"""
from __future__ import annotations

import re
from dataclasses import replace

from fuzzcomp.generators import Case
from fuzzcomp.generators.ir import Assign, Mutate, Program, Return, walk_program
from fuzzcomp.oracles import Observation, Verdict
from fuzzcomp.oracles.fp64rule import compare

MAX_INTERMEDIATES = 48


def _plain(op: str) -> str:
    return re.sub(r"\[.*\]$", "", op.split(":", 1)[1] if op.startswith(("branch:", "cond:")) else op)


def _refs(args) -> set[str]:
    out = set()
    for a in args:
        name = getattr(a, "name", None)
        if isinstance(name, str):
            out.add(name)
    return out


def _root(name: str) -> str:
    return name.split("[")[0].split(".")[0] if not name.startswith("self.") else name.split("[")[0]


def cheap_culprit(program: Program, label: str) -> str:
    """The op that last wrote the value ``label`` names (the first reader of the input for a
    gradient); "" if none."""
    stmts = [s for s in walk_program(program) if isinstance(s, (Assign, Mutate))]
    if label.startswith("grad of input "):
        name = label.removeprefix("grad of input ")
        op = next((s.op for s in stmts if name in _refs(s.args)), "")
        return _plain(op)
    if label.startswith("output"):
        m = re.match(r"output\[(\d+)\]", label)
        k = int(m.group(1)) if m else 0
        if k >= len(program.outputs):
            return ""
        var = program.outputs[k]
    else:  # "input x after call", "buffer MODEL.buf0 after call", "global g after call"
        parts = label.split(" ")
        var = parts[1] if len(parts) > 1 else ""
        if var.startswith("MODEL."):
            var = "self." + var.split(".", 1)[1]
    writers = [s for s in stmts if (isinstance(s, Assign) and s.out == var)
               or (isinstance(s, Mutate) and _root(s.target) == var)]
    return _plain(writers[-1].op) if writers else ""


def intermediates_variant(program: Program) -> tuple[Program, list[Assign]] | None:
    """The program also returning each top-level intermediate (None: nothing to add, or a
    body with an early return, whose outputs the variant could not extend)."""
    if any(isinstance(s, Return) for s in walk_program(program)):
        return None
    seen = set(program.outputs)
    extra = []
    for s in program.body:
        if isinstance(s, Assign) and s.out not in seen and s.type is not None:
            seen.add(s.out)
            extra.append(s)
    extra = extra[:MAX_INTERMEDIATES]
    if not extra:
        return None
    return replace(program, outputs=tuple(program.outputs) + tuple(s.out for s in extra),
                   out_kind="tuple"), extra


def first_diverging(case: Case, obs: Observation, verdict: Verdict, options) -> str:
    """The op of the first intermediate whose compiled value fails the fp64 rule; "" if none."""
    from .execute import observe
    built = intermediates_variant(case.program)
    if built is None or verdict.call < 0:
        return ""
    program, extra = built
    variant = replace(case, program=program, calls=case.calls[:verdict.call + 1])
    sub = replace(options, grad="off", replay=False, aliases=False, ladder=False, culprit=False,
                  cross_device=False)
    try:
        vobs = observe(variant, options=sub)
    except Exception:  # the variant is a probe: failing to build it falls back, never raises
        return ""
    stats = obs.stats
    n_out = len(case.program.outputs)
    # the earliest call where an intermediate diverges: one bug names one op whichever call of
    # the schedule the primary verdict came from
    for rec in vobs.calls:
        if rec.eager.error or rec.compiled is None or rec.compiled.error \
                or rec.eager.labels != rec.compiled.labels:
            continue
        ref = rec.fp64.values if rec.fp64 is not None and rec.fp64.error is None else None
        for j, stmt in enumerate(extra):
            prefix = f"output[{n_out + j}]"
            for i, label in enumerate(rec.eager.labels):
                if label != prefix and not label.startswith(prefix + "["):
                    continue
                r = ref[i] if ref is not None and i < len(ref) else None
                status, _ = compare(rec.eager.values[i], rec.eager_again.values[i], r, rec.compiled.values[i],
                                    floor_eps=float(stats.get("floor_eps", 0.0)),
                                    reduce_n=int(stats.get("reduce_n", 1)),
                                    coarse_eps=float(stats.get("coarse_eps", 0.0)))
                if status == "mismatch":
                    return _plain(stmt.op)
    return ""


def culprit_of(case: Case, obs: Observation, verdict: Verdict, options, deep: bool = False) -> str:
    found = ""
    if deep and verdict.symptom in ("numeric", "mutation"):
        found = first_diverging(case, obs, verdict, options)
        obs.stats["culprit"] = "first diverging intermediate" if found else \
            "no intermediate diverges: the value's writer"
    return f"culprit op: {found or cheap_culprit(case.program, verdict.label) or 'unknown'}"
