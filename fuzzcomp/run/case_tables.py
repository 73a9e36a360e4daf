"""The tables a case is run from, and the fp64 rule's floors for it.

Contract: pure functions of a Case, shared by the executor and the long repro file (which pastes
the same tables): ``load_namespace``/``load_program`` execute the emitted source;
``input_specs``, ``state_specs`` and ``call_entry`` are the runtime's input, state and call tables;
``reduce_n`` (the most terms one sum can add), ``coarse_eps`` and ``cast_floor_eps`` are the
floors of the fp64 rule.
"""
from __future__ import annotations

import linecache
import math
import re

import torch

from fuzzcomp.generators import Case, emit
from fuzzcomp.generators.emit import MODEL_INSTANCE
from fuzzcomp.generators.ir import op_names
from fuzzcomp.generators.registry import FAMILY_OF
from fuzzcomp.run.call_extras import call_extra, input_info, library_state_specs


#: how many programs' sources stay registered with ``linecache`` in one process
_SOURCES_KEPT = 64


def load_namespace(case: Case) -> dict:
    """Execute the emitted source; the namespace holds ``fn``, MODEL, globals and helpers.

    The source is registered with ``linecache`` under the code's file name, so
    ``inspect.getsourcefile(fn)`` finds it as it finds a function defined in a file. torch
    before 2.13 wraps a function without a source file in ``wrap_inline`` before compiling it:
    every program of a long-lived worker then shares that wrapper's code object (one cache
    entry list for all of them) and ``fn`` is inlined instead of being the root frame, so a
    worker saw crashes (an empty AssertionError at a global's store) that the same program in a
    file never shows (upstream #124269)."""
    source = emit(case.program)
    filename = f"<fuzzcomp seed {case.seed}>"
    _register_source(filename, source)
    # DEVICE: the case's device, named by factories that have no tensor to take it from
    namespace = {"torch": torch, "DEVICE": case.compile.device}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def _register_source(filename: str, source: str) -> None:
    """``source`` in ``linecache`` under ``filename`` (no mtime: never checked against a file),
    keeping the last ``_SOURCES_KEPT`` programs' sources only."""
    ours = [k for k in linecache.cache if isinstance(k, str) and k.startswith("<fuzzcomp seed ")]
    for k in ours[:max(0, len(ours) - _SOURCES_KEPT + 1)]:
        if k != filename:
            linecache.cache.pop(k, None)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def load_program(case: Case):
    return load_namespace(case)[case.program.name]


def input_specs(case: Case) -> list[tuple]:
    """The runtime's input table: (name, shape, dtype, layout[, info]) per input."""
    specs = []
    names = [i.name for i in case.program.inputs]
    for i in case.program.inputs:
        spec = (i.name, i.type.shape, i.type.dtype, i.layout)
        if i.kind in ("list", "tuple", "dict"):
            spec += ({"kind": i.kind, "count": i.count},)
        elif i.kind in ("int", "float"):
            spec += ({"kind": i.kind},)
        elif i.kind == "alias":
            spec += ({"kind": "alias", "of": names.index(i.alias_of), "view": i.view},)
        elif input_info(i):
            spec += (input_info(i),)
        specs.append(spec)
    return specs


def state_specs(case: Case) -> list[tuple]:
    """The runtime's state table: (path, shape, dtype, param|buffer|global) per state tensor."""
    out = []

    def module(m, prefix):
        for st in m.state:
            out.append((f"{prefix}.{st.name}", st.type.shape, st.type.dtype, st.kind))
        for attr, sub in m.submodules:
            module(sub, f"{prefix}.{attr}")
    if case.program.module is not None:
        module(case.program.module, MODEL_INSTANCE)
    out += [(g.name, g.type.shape, g.type.dtype, "global") for g in case.program.globals if g.kind == "tensor"]
    return out + library_state_specs(case)


def call_entry(case: Case, call) -> tuple:
    """One call-table row: (sizes, seed) or (sizes, seed, extra) with the non-default call state."""
    extra: dict = {}
    if call.scalars:
        extra["scalars"] = call.scalars
    if call.globals:
        extra["globals"] = call.globals
    if call.grad_mode != "grad":
        extra["grad_mode"] = call.grad_mode
    if call.inference_inputs:
        extra["inference_inputs"] = True
    grads = call.requires_grad if call.requires_grad is not None else \
        tuple(i.name for i in case.program.inputs if i.requires_grad)
    if grads:
        extra["requires_grad"] = grads
    if call.marks:
        extra["marks"] = call.marks
    extra.update(call_extra(case, call))
    return (call.sizes, call.seed, extra) if extra else (call.sizes, call.seed)


#: op families whose results sum many terms (order-dependent rounding): see fp64rule ``reduce_n``
REDUCING_FAMILIES = frozenset({"reduction", "matmul", "nn", "indexing"})


def reduce_n(case: Case, grads: bool) -> int:
    """The most terms one sum of the case can add, bounded by the largest tensor it sees: the
    largest input or state numel over its calls when the program reduces (or gradients are
    checked: backward sums over broadcast dimensions), else 1."""
    ops = {re.sub(r"\[.*\]$", "", op.split(":", 1)[1] if op.startswith(("branch:", "cond:")) else op)
           for op in op_names(case.program)}
    reduces = grads or any(FAMILY_OF.get(op) in REDUCING_FAMILIES or op.startswith("autocast:")
                           for op in ops)
    if not reduces:
        return 1
    shapes = [spec[1] for spec in input_specs(case)] + [spec[1] for spec in state_specs(case)]
    best = 1
    for call in case.calls:
        env = dict(zip(case.program.symbols, call.sizes))
        for shape in shapes:
            best = max(best, math.prod(env.get(d, 1) if isinstance(d, str) else int(d) for d in shape))
    return best


def _tensor_types(case: Case) -> list:
    """Types of the program's tensors: tensor-like inputs and module state (a scalar input's
    type is only a placeholder)."""
    types = [i.type for i in case.program.inputs if i.kind in ("tensor", "alias", "list", "tuple", "dict")]
    if case.program.module is not None:
        types += [st.type for st in case.program.module.state]
    return types


def coarse_eps(case: Case, cast_eps: float | None = None) -> float:
    """The epsilon of the coarsest float type among the program's tensors and its casts
    (``cast_eps``: ``cast_floor_eps(case)`` when already known): the fp64 rule's floor when the
    fp64 run failed and eager is the only witness."""
    eps = [torch.finfo(getattr(torch, t.dtype)).eps for t in _tensor_types(case) if t.is_float]
    return max(eps + [cast_floor_eps(case) if cast_eps is None else cast_eps])


def mixed_precision_eps(case: Case) -> float:
    """The epsilon of the coarsest float tensor of a program that also computes in float64 (a
    float64 tensor, or a float64 cast), else 0.0: type promotion carries that tensor's rounding into
    float64 values, so a float64 output is no finer than it (CPU 1510: the float32 mean of l1_loss,
    then minimum with a float64 input; eager's and compiled's float32 sums were 0.05 and 0.4 ulp
    off, and float64's floor called the second a bug). ``value_floors`` keeps float64's floor for
    the outputs no coarser value reaches."""
    eps = {torch.finfo(getattr(torch, t.dtype)).eps for t in _tensor_types(case) if t.is_float}
    src = emit(case.program)
    has64 = torch.finfo(torch.float64).eps in eps or "float64" in src or ".double()" in src
    coarse = max(eps, default=0.0)
    return coarse if has64 and coarse > torch.finfo(torch.float64).eps else 0.0


def cast_floor_eps(case: Case) -> float:
    """The epsilon of the coarsest float type the program itself casts to (explicit casts,
    dtype arguments, autocast regions): the fp64 run stays that coarse there, so the fp64
    rule's floor can be no finer (0.0: nothing below the values' own dtypes)."""
    src = emit(case.program)
    if "bfloat16" in src or "autocast" in src:
        return 2.0 ** -7
    if "float16" in src or ".half()" in src:
        return 2.0 ** -10
    # float32 casts, and integer/bool tensors promoted to the default float type: the fp64 run
    # does not upcast those (integers are not upcast), so its "fp64" values went through float32
    # there; compiled code that keeps more precision (a fused float64 log10) is not a bug
    if "float32" in src or ".float()" in src or any(not t.is_float for t in _tensor_types(case)):
        return 2.0 ** -23
    return 0.0
