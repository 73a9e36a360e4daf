"""Execution glue for the reach capabilities (caller actions, special values, library modules,
global state, scalar capture knobs): what the executor adds to its tables and stats.

Contract: pure functions of a Case (and of the eager records) that ``fuzzcomp.run.execute`` calls
through one-line hooks:

* ``input_info(inp)``: extra runtime info for one input (``special``), merged into its spec;
* ``library_state_specs(case)``: state-table rows for the parameters and buffers of the
  program's torch.nn library modules (so the runtime seeds them per call, upcasts them for the
  fp64 run and reports buffers after the call; running variances stay positive);
* ``call_extra(case, call)``: the call-table keys for ``caller`` actions, ``rebound`` globals and
  ``autocast`` (the program has an autocast block);
* ``dynamo_config(case)``: a context that sets the case's ``CompileSpec.config`` on
  ``torch._dynamo.config`` (names this torch lacks are skipped); ``config_lines(case)`` is the
  same as source lines for a repro file;
* ``reach_stats(case, stats, records, reduce_n)``: stats for the oracles: ``special_calls`` (calls whose values
  may hold special values, for the exact comparison), ``special_sign_labels`` (the outputs
  whose every producing op, back to the inputs, defines the sign of a zero), ``special_casts`` (some float value is cast to an integer: its
  result is undefined for NaN/inf), ``special_clean`` (``special_clean(case)``: the values no
  special value can reach), ``special_sum_free`` (``sum_free_outputs(case)``: the outputs no
  sum of the program flows into); a caller autocast coarsens ``floor_eps``/``coarse_eps``
  to bfloat16 and widens ``reduce_n`` like an autocast region in the program does;
  ``caller_induced`` (see below) makes ``Observation.eager_valid`` true;
* ``caller_induced(case, records)``: every eager failure is the caller's own action (a write
  after the call, or the backward after it), so the case is judged on crash parity instead of
  being dropped as eager-invalid or losing its gradients.
"""
from __future__ import annotations

import contextlib
import functools

import torch

from fuzzcomp.generators.emit import MODEL_INSTANCE
from fuzzcomp.generators.reach_args import SPECIAL_SOURCES
from fuzzcomp.generators.ir import (Assign, Case, CondOp, If, Mutate, Ref, Return, all_bodies, cond_refs,
                                    refs_of, walk, walk_program, With)

#: ops whose zero results may carry either sign (IEEE leaves max/min of +-0 open; selections
#: and sorts of +-0 ties pick either; a sum's zero depends on where its accumulator starts and
#: where a negation falls): the sign of a zero is not judged in programs using them. Losses,
#: pools, interpolation, bags and traces reduce too (CPU 1603: cross_entropy of one class is
#: -0.0 compiled, the negation after the mean, and 0.0 in eager, whose mean starts from +0.0)
SIGN_OPEN = ("max", "min", "clamp", "clip", "relu", "hardtanh", "sort", "topk", "median", "mode",
             "kthvalue", "quantile", "fmax", "fmin", "threshold", "where", "masked", "scatter", "index",
             "gather", "take", "cummax", "cummin", "unique", "select", "dds:", "nnlib:", "autocast",
             "sum", "mean", "matmul", "mm", "bmm", "einsum", "dot", "linear", "conv", "norm", "std", "var",
             "prod", "addc", "lerp", "softmax", "logsumexp", "round", "sign",
             "loss", "entropy", "kl_div", "pool", "interpolate", "bag", "trace")
MUTATING_ACTIONS = ("mutate_output", "mutate_input")


def input_info(inp) -> dict:
    return {"special": True} if getattr(inp, "special", False) else {}


@functools.lru_cache(maxsize=64)
def _library_rows(attr: str, ctor: str) -> tuple:
    mod = eval(ctor, {"torch": torch})  # noqa: S307  (our own generated constructor text)
    rows = [(f"{MODEL_INSTANCE}.{attr}.{n}", tuple(p.shape), str(p.dtype).replace("torch.", ""), "param")
            for n, p in mod.named_parameters()]
    for n, b in mod.named_buffers():
        kind = "buffer_var" if n.endswith("running_var") else "buffer"
        rows.append((f"{MODEL_INSTANCE}.{attr}.{n}", tuple(b.shape), str(b.dtype).replace("torch.", ""), kind))
    return tuple(rows)


def library_state_specs(case: Case) -> list[tuple]:
    m = case.program.module
    if m is None:
        return []
    return [row for attr, ctor in getattr(m, "library", ()) for row in _library_rows(attr, ctor)]


def call_extra(case: Case, call) -> dict:
    extra: dict = {}
    if getattr(call, "caller", ()):
        extra["caller"] = tuple(call.caller)
    rebound = tuple(g.name for g in case.program.globals if g.kind == "rebound")
    if rebound:
        extra["rebound"] = rebound
    if _has_autocast_block(case):  # its perturbed runs move inputs by bfloat16 steps (runtime)
        extra["autocast"] = True
    return extra


@functools.lru_cache(maxsize=256)
def _has_autocast_block(case: Case) -> bool:
    return any(isinstance(s, With) and s.kind == "autocast" for s in walk_program(case.program))


@contextlib.contextmanager
def dynamo_config(case: Case):
    import torch._dynamo.config as dc
    known = {k: v for k, v in getattr(case.compile, "config", ()) if hasattr(dc, k)}
    with dc.patch(known) if known else contextlib.nullcontext():
        yield


def _sign_open(text: str) -> bool:
    return any(word in text for word in SIGN_OPEN)


def sign_labels(case: Case) -> list[str]:
    """Output labels whose value is built only by single assignments of sign-defining ops from
    the inputs (nothing mutated, joined, looped or returned early on the way)."""
    p = case.program
    stmts = list(walk_program(p))
    if any(isinstance(s, Return) for s in stmts):
        return []
    made: dict = {}
    count: dict = {}
    for s in stmts:
        for name in _defined(s):
            count[name] = count.get(name, 0) + 1
        if isinstance(s, Assign):
            made[s.out] = s
    mutated = {s.target for s in stmts if isinstance(s, Mutate)}
    inputs = {i.name for i in p.inputs}

    @functools.lru_cache(maxsize=None)
    def ok(name: str) -> bool:
        if name in mutated:
            return False
        if name in inputs:
            return True
        s = made.get(name)
        if s is None or count.get(name) != 1 or _sign_open(s.op + " " + s.template):
            return False
        return all(ok(a.name) for a in s.args if isinstance(a, Ref))

    if p.out_kind == "single":
        labels = ["output"]
    elif p.out_kind == "dict":
        labels = [f"output['o{i}']" for i in range(len(p.outputs))]
    else:
        labels = [f"output[{i}]" for i in range(len(p.outputs))]
    return [lab for lab, name in zip(labels, p.outputs) if ok(name)]


def output_labels(case: Case) -> list[str]:
    p = case.program
    if p.out_kind == "single":
        return ["output"]
    if p.out_kind == "dict":
        return [f"output['o{i}']" for i in range(len(p.outputs))]
    return [f"output[{i}]" for i in range(len(p.outputs))]


def special_clean(case: Case) -> dict:
    """The values of a special-value program that no special value can reach, by a conservative
    forward taint from the special inputs and the ops that make special values (``const:tensor``
    constants, fills and infinite divisors of ``reach_args.SPECIAL_SOURCES``):
    ``{"outputs": [labels], "grads": bool, "inputs": bool}``. Anything the analysis cannot follow
    (a special constant in a helper or submodule, an early return, a tainted in-place write, which
    may reach other names through views) leaves nothing clean. Gradients are clean only when
    every output is (the loss sums them all); inputs after the call only when no write is tainted.
    """
    nothing = {"outputs": [], "grads": False, "inputs": False}
    p = case.program
    bodies = list(all_bodies(p))
    if any(isinstance(s, Assign) and s.op in SPECIAL_SOURCES for b in bodies[1:] for s in walk(b)):
        return nothing
    main = list(walk(p.body))
    if any(isinstance(s, Return) for s in main):
        return nothing
    tainted = {i.name for i in p.inputs if getattr(i, "special", False)}
    changed = True
    while changed:  # to a fixpoint: a loop body may taint a carried name used earlier in it
        changed = False
        for s in main:
            reads = refs_of(s)
            if isinstance(s, Assign):
                hit = s.op in SPECIAL_SOURCES or bool(reads & tainted)
                names = [s.out] if hit else []
            elif isinstance(s, Mutate):
                if reads & tainted:
                    return nothing
                names = []
            elif isinstance(s, If):  # a branch taken on tainted data taints what it joins
                names = [n for n, _t in s.joins] if cond_refs(s.cond) & tainted else []
            elif isinstance(s, CondOp):
                names = [s.out] if reads & tainted else []
            else:
                out = getattr(s, "out", None)
                names = [out] if isinstance(out, str) and reads & tainted else []
            for n in names:
                if n not in tainted:
                    tainted.add(n)
                    changed = True
    clean = [lab for lab, name in zip(output_labels(case), p.outputs) if name not in tainted]
    return {"outputs": clean, "grads": len(clean) == len(p.outputs), "inputs": True}


#: op families that never sum: a value made only by them cannot overflow by summation order
_SUM_FREE_FAMILIES = frozenset({"pointwise", "comparison", "logical", "cast", "view", "shape", "copy"})


def _sum_free_op(op: str) -> bool:
    from fuzzcomp.generators.registry import FAMILY_OF
    if op.startswith(("const:", "sarg:")):
        return not op.endswith("softmax")  # softmax sums its exponentials
    return FAMILY_OF.get(op) in _SUM_FREE_FAMILIES


def sum_free_outputs(case: Case) -> list[str]:
    """The output labels whose every producing statement, back to the inputs, is a single
    assignment in the main body by an op that never sums (``_SUM_FREE_FAMILIES``, special
    constants and argument ops but softmax), with nothing in between written in place: a sum
    elsewhere in the program cannot make these values non-finite by its order."""
    p = case.program
    main = list(walk(p.body))
    if any(isinstance(s, Return) for s in main):
        return []
    made: dict = {}
    count: dict = {}
    for s in main:
        for name in _defined(s):
            count[name] = count.get(name, 0) + 1
        if isinstance(s, Assign):
            made[s.out] = s
    mutated = {s.target for s in walk_program(p) if isinstance(s, Mutate)}
    leaves = {i.name for i in p.inputs}

    @functools.lru_cache(maxsize=None)
    def ok(name: str) -> bool:
        if name in mutated:
            return False
        if name in leaves or name.startswith("self."):
            return True
        s = made.get(name)
        if s is None or count.get(name) != 1 or not _sum_free_op(s.op):
            return False
        return all(ok(a.name) for a in s.args if isinstance(a, Ref))

    return [lab for lab, name in zip(output_labels(case), p.outputs) if ok(name)]


def _defined(s) -> list[str]:
    out = getattr(s, "out", None)
    names = [out] if isinstance(out, str) else []
    names += [n for n, _t in getattr(s, "joins", ())] + [n for n, _t in getattr(s, "carried", ())]
    return names


def config_lines(case: Case) -> str:
    """Source lines a repro file sets the case's dynamo config with (empty when it has none)."""
    items = tuple(getattr(case.compile, "config", ()))
    if not items:
        return ""
    return "import torch._dynamo.config\n" + "".join(
        f"torch._dynamo.config.{k} = {v!r}  # the case's compile config\n" for k, v in items)


def _casts_float_to_int(case: Case) -> bool:
    types: dict = {i.name: i.type for i in case.program.inputs}
    for s in walk_program(case.program):
        if isinstance(s, Assign):
            if not s.type.is_float and any(isinstance(a, Ref) and a.name in types and types[a.name].is_float
                                           for a in s.args):
                return True
            if ".to(torch.int" in s.template or ".long()" in s.template or ".int()" in s.template:
                return True
            types[s.out] = s.type
    return False


def reach_stats(case: Case, stats: dict, records=(), reduce_n=None) -> dict:
    """``reduce_n(case, grads)`` is the executor's sum-length bound, handed in (the executor
    imports this module)."""
    out: dict = {}
    if caller_induced(case, records):
        out["caller_induced"] = True
    writes = [k for k, c in enumerate(case.calls) if any(a in c.caller for a in MUTATING_ACTIONS)]
    if writes:
        out["caller_write_calls"] = writes
    p = case.program
    has_special = any(getattr(i, "special", False) for i in p.inputs) or \
        any(isinstance(s, Assign) and s.op in SPECIAL_SOURCES for s in walk_program(p))
    if has_special:
        out["special_calls"] = list(range(len(case.calls)))
        out["special_sign_labels"] = sign_labels(case)
        out["special_casts"] = _casts_float_to_int(case)
        out["special_clean"] = special_clean(case)
        out["special_sum_free"] = sum_free_outputs(case)
    autocast_calls = [k for k, c in enumerate(case.calls) if "autocast" in getattr(c, "caller", ())]
    if autocast_calls:
        out["caller_autocast_calls"] = autocast_calls
        out["floor_eps"] = max(float(stats.get("floor_eps", 0.0)), 2.0 ** -7)
        out["coarse_eps"] = max(float(stats.get("coarse_eps", 0.0)), 2.0 ** -7)
        out["reduce_n"] = max(int(stats.get("reduce_n", 1)), reduce_n(case, True))
    if p.module is not None and getattr(p.module, "library", ()):
        out["reduce_n"] = max(int(stats.get("reduce_n", 1)), reduce_n(case, True))
    return out


def caller_induced(case: Case, records) -> bool:
    """Eager failed only where the caller's own write (or the backward after it) failed."""
    failed = [(k, r.eager.error) for k, r in enumerate(records) if r.eager.error is not None]
    if not failed:
        return False
    return all(any(a in case.calls[k].caller for a in MUTATING_ACTIONS)
               and err[2].startswith(("caller: ", "backward: ")) for k, err in failed)
