"""A cheap static check for reducer candidates: run the program on meta tensors.

Contract: ``retype(program)`` returns the program with every ``Assign.type``
recomputed from a run on ``device="meta"`` (no data, no compile, no worker),
or ``None`` when the program no longer type-checks (a shape, rank or dtype
error, an op the meta device rejects, an input layout its rank cannot have,
or a statement kind this checker does not know). Each symbol gets a distinct
large prime as its size, so a symbolic dim is recovered by value and two dims
compare equal only when they are equal for every size. Both branches of an
``if`` are checked. It never runs a compiler: the reducer uses it to throw
away ill-typed candidates before spending a ~2 s probe on them, and to keep
the types the rewiring passes compare up to date after a rank or dtype change.
"""
from __future__ import annotations

import dataclasses
import warnings

import torch

from fuzzcomp.generators.emit import render_stmt
from fuzzcomp.generators.ir import Assign, If, Mutate, Program, TensorType
from fuzzcomp.generators.shapes import dim_value
from fuzzcomp.base.layouts import base_shape, view_of
from fuzzcomp.run.runtime import global_state, restore_global_state

def import_lazy_torch() -> None:
    """Import what running ops on meta tensors imports lazily (torch._dynamo, Inductor's utils).

    Call it in the main thread before minimisers run ``retype`` in threads: two threads that
    trigger the same lazy import at once see a partially initialised module (ImportError
    "cannot import name 'IndentedBuffer' from partially initialized module
    'torch._inductor.utils'"), which failed every minimisation of a resumed campaign at once."""
    import torch._dynamo  # noqa: F401
    import torch._inductor.test_operators  # noqa: F401
    import torch._inductor.utils  # noqa: F401


_PRIMES = (101, 103, 107, 109, 113, 127, 131, 137)


def _meta_input(shape, dtype: str, layout: str) -> torch.Tensor:
    """Same shape, strides and dtype rules as ``runtime.make_input``, without data."""
    base = torch.empty(base_shape(shape, layout), dtype=getattr(torch, dtype), device="meta")
    return view_of(base, shape, layout)


def _type_of(value, old: TensorType, env: dict) -> TensorType:
    if not isinstance(value, torch.Tensor):
        raise TypeError("not a tensor")
    by_value = {v: k for k, v in env.items()}
    dims = []
    for i, n in enumerate(value.shape):
        n = int(n)
        keep = old.shape[i] if i < len(old.shape) else None
        if keep is not None:
            try:
                if dim_value(keep, env) == n:
                    dims.append(keep)
                    continue
            except (KeyError, ValueError):
                pass
        dims.append(by_value.get(n, n))
    return TensorType(tuple(dims), str(value.dtype).replace("torch.", ""))


def _run_body(body, names: dict, env: dict):
    out = []
    for s in body:
        if isinstance(s, Assign):
            line = "\n".join(render_stmt(s, 0))
            exec(line, {"torch": torch}, names)  # noqa: S102 - our own emitted IR, never user text
            out.append(dataclasses.replace(s, type=_type_of(names[s.out], s.type, env)))
        elif isinstance(s, Mutate):
            exec("\n".join(render_stmt(s, 0)), {"torch": torch}, names)  # noqa: S102
            out.append(s)
        elif isinstance(s, If):
            sides = []
            for branch in (s.then, s.orelse):
                scope = dict(names)
                sides.append((_run_body(branch, scope, env), scope))
            joins = []
            for name, t in s.joins:
                a, b = (_type_of(sc[name], t, env) for _, sc in sides)
                if a != b:
                    raise TypeError(f"branches disagree on {name}")
                names[name] = sides[0][1][name]
                joins.append((name, a))
            out.append(dataclasses.replace(s, then=sides[0][0], orelse=sides[1][0], joins=tuple(joins)))
        else:
            raise TypeError(f"statement kind {type(s).__name__} is not checked here")
    return tuple(out)


def retype(program: Program) -> Program | None:
    """The program with every declared type recomputed on meta tensors, or None (ill-typed or
    not modelled). Warnings the program raises are the candidate's business, never printed."""

    # a candidate may change torch's globals (set_default_dtype, use_deterministic_algorithms,
    # set_grad_enabled): run on meta tensors here, in the minimising process, they must not stay
    saved = global_state()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _retype(program)
    finally:
        restore_global_state(saved)


def _retype(program: Program) -> Program | None:
    if len(program.symbols) > len(_PRIMES):
        return None
    env = dict(zip(program.symbols, _PRIMES))
    try:
        names = {}
        for inp in program.inputs:
            shape = [dim_value(d, env) for d in inp.type.shape]
            names[inp.name] = _meta_input(shape, inp.type.dtype, inp.layout)
        body = _run_body(program.body, names, env)
        if not all(o in names for o in program.outputs):
            return None
    except Exception:  # any failure means: this candidate does not type-check
        return None
    return dataclasses.replace(program, body=body)
