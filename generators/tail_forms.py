"""Forms built at the end of the body, drawn last in the choice stream.

Contract: ``BUILDERS`` maps each capability of ``reach.TAIL_CAPABILITIES`` to a builder
``(ch, scope, ctx) -> (names, helpers)``: it appends statements to ``scope.stmts`` and returns
the names of the values to return and the helper functions to add to the program (``((), ())``,
nothing appended, when it cannot apply). Their values never enter ``scope.vals``. ``build.py``
runs them after the argument capabilities, so a seed that draws none keeps its program byte for
byte. ``FAMILIES`` gives each op name they emit a family (``registry.FAMILY_OF`` holds them, so
the fp64 rule counts a norm's sum); ``OUT_OPS`` and ``WIDEN_OP`` name their statements for
``features_ops``; a helper made for ``nested_region`` is a ``Function`` with ``nested=True``.

* ``out_topk_max_norm``: ``out=`` on ``torch.topk``, the dim forms of ``torch.max``/``torch.min``
  (values and indices) and ``torch.linalg.norm``, into fresh ``torch.empty`` tensors of the
  result's shape and dtype, or (a share) of zero elements, which eager resizes without a warning
  (resizing a non-empty out tensor of the wrong shape is deprecated and warns). The input is
  detached: ``out=`` refuses tensors that require grad. Indices are returned only of exact values
  (bit-identical in every run, ties broken by the documented first index); topk's never (the
  order of its tied indices is unspecified).
* ``widen_view_out``: ``x.view(torch.int32)`` / ``x.view(torch.float32)`` of a float16, bfloat16
  or int16 tensor (the last dim halves), returned as it is, no mask over it: an int32 view is
  compared exactly, so a compiler whose half-precision value differs in one low bit shows.
  Soundness: an exact comparison is only fair when eager, compiled, the fp64 run and the
  perturbed eager runs all hold the very same bits in the source. So the source is never float
  data: it is an int16 value (integer ops are exact, integer inputs are neither upcast in the
  fp64 run nor perturbed) or an integer/bool value cast to float16/bfloat16 by the program itself
  (exact below 2048 and 256, and an explicit cast stays half in the fp64 run). A half value made
  by float arithmetic is not exactly comparable (compiled code rounds once where eager rounds
  per op), and a half input or a value copied from one is moved by every perturbed run, which
  would screen any mismatch as a tie: neither is taken. The source is made contiguous at offset
  0 (a view to a wider type needs it); an odd last dim is doubled first (each element twice).
* ``nested_region``: a helper decorated with ``torch.compiler.nested_compile_region`` (only
  where this torch has it), built like the structure helpers but with no random op and no in-place write (a write into a
  local saved for backward fails eager's backward, and the schedule was drawn before), called on
  two values of one type (a second value of that type, or ``torch.roll`` of the first), both
  results returned.
"""
from __future__ import annotations

import dataclasses

import torch

from . import shapes
from .choices import ChoiceStream
from .ir import Assign, CallFn, Ref, TensorType
from .scope import Scope

HAS_NESTED = getattr(getattr(torch, "compiler", None), "nested_compile_region", None) is not None
OUT_OPS = ("torch.topk[out]", "torch.max[out]", "torch.min[out]", "torch.linalg.norm[out]")
WIDEN_OP = "Tensor.view[widen_out]"
FAMILIES = {"torch.topk[out]": "sort", "torch.max[out]": "reduction", "torch.min[out]": "reduction",
            "torch.linalg.norm[out]": "reduction", "torch.max": "reduction", "torch.min": "reduction",
            "torch.linalg.norm": "reduction", WIDEN_OP: "cast"}
_NUM = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8")
_FLOAT = ("float32", "float64", "float16", "bfloat16")
#: the largest integer magnitude each half type holds exactly
_EXACT_INT = {"float16": 2048, "bfloat16": 256}


def _free(v) -> bool:
    return not v.name.startswith(("self.", "G"))


def _sizes(shape, keep_at=None, new=None) -> str:
    """A ``torch.empty`` size tuple for ``shape`` read from ``{0}``'s sizes (``new`` replaces
    dim ``keep_at``; ``keep_at`` with ``new`` None drops it)."""
    dims = []
    for i, e in enumerate(shape):
        if i == keep_at:
            if new is not None:
                dims.append(str(new))
            continue
        dims.append(str(e) if isinstance(e, int) else f"{{0}}.shape[{i}]")
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _empty(sizes: str, dtype: str, zero: bool) -> str:
    return f"torch.empty({'0' if zero else sizes}, dtype={dtype}, device={{0}}.device)"


def out_topk_max_norm(ch: ChoiceStream, scope: Scope, ctx) -> tuple:
    op = ch.choice(OUT_OPS)
    ok = _FLOAT if op == "torch.linalg.norm[out]" else _NUM
    x = scope.pick(lambda v: v.type.dtype in ok and v.type.rank >= 1 and _free(v))
    if x is None:
        return (), ()
    d = ch.integer(0, x.type.rank - 1)
    lo = scope.min_dim(x.type.shape[d])
    if lo < 1:
        return (), ()
    zero = ch.boolean(0.3)  # zero-element out tensors: eager resizes them, silently
    sh = x.type.shape
    if op == "torch.topk[out]":
        k = ch.integer(1, min(lo, 4))
        shape = sh[:d] + (k,) + sh[d + 1:]
        size = _sizes(sh, d, k)
        outs = f"({_empty(size, '{0}.dtype', zero)}, {_empty(size, 'torch.int64', zero)})"
        tmpl = f"torch.topk({{0}}.detach(), {k}, {d}, largest={ch.boolean()}, out={outs})[0]"
        t = TensorType(shape, x.type.dtype)
    else:
        keep = ch.boolean()
        shape = tuple(1 if i == d else e for i, e in enumerate(sh)) if keep else sh[:d] + sh[d + 1:]
        size = _sizes(sh, d, 1 if keep else None)
        if op == "torch.linalg.norm[out]":
            tmpl = (f"torch.linalg.norm({{0}}.detach(), dim={d}, keepdim={keep}, "
                    f"out={_empty(size, '{0}.dtype', zero)})")
            t = TensorType(shape, x.type.dtype)
        else:
            which = 1 if x.exact and ch.boolean() else 0  # indices only of bit-identical values
            outs = f"({_empty(size, '{0}.dtype', zero)}, {_empty(size, 'torch.int64', zero)})"
            fn = op.split("[")[0]
            tmpl = f"{fn}({{0}}.detach(), {d}, keepdim={keep}, out={outs})[{which}]"
            t = TensorType(shape, "int64" if which else x.type.dtype)
    if not scope.fits(t):
        return (), ()
    out = scope.fresh()
    scope.stmts.append(Assign(out, op, tmpl, (Ref(x.name),), t))
    return (out,), ()


def _even_on_every_call(scope: Scope, dim) -> bool:
    if isinstance(dim, int):
        return dim % 2 == 0 and dim > 0
    lo = scope.min_dim(dim)
    n = len(next(iter(scope.sizes.values()), [0]))
    envs = [{k: v[i] for k, v in scope.sizes.items()} for i in range(max(n, 1))]
    return lo > 0 and all(shapes.dim_value(dim, env) % 2 == 0 for env in envs)


def widen_view_out(ch: ChoiceStream, scope: Scope, ctx) -> tuple:
    half = ch.weighted(("float16", "bfloat16", "int16"), (2, 2, 1))
    if half == "int16":
        x = scope.pick(lambda v: v.type.dtype == "int16" and _free(v))
        src = "{0}.clone(memory_format=torch.contiguous_format)"
    else:
        x = scope.pick(lambda v: (v.type.is_int or v.type.is_bool) and v.bound <= _EXACT_INT[half] and _free(v))
        src = f"{{0}}.to(torch.{half}, memory_format=torch.contiguous_format)"
    if x is None:
        return (), ()
    dst = ch.weighted(("int32", "float32"), (3, 1))
    sh = x.type.shape
    if sh and _even_on_every_call(scope, sh[-1]):
        last = sh[-1]
        shape = sh[:-1] + ((last // 2) if isinstance(last, int) else f"({last})//2",)
    else:  # each element twice side by side: an even last dim on every call
        src = f"{src}.unsqueeze(-1).expand(*{{0}}.shape, 2).clone(memory_format=torch.contiguous_format)"
        shape = sh + (1,)
    t = TensorType(tuple(shape), dst)
    if not scope.fits(t):
        return (), ()
    out = scope.fresh()
    scope.stmts.append(Assign(out, WIDEN_OP, f"{src}.view(torch.{dst})", (Ref(x.name),), t))
    return (out,), ()


#: what Dynamo cannot put in a graph: a region body holding one graph-breaks, and a region may
#: not break (UncapturedHigherOrderOpError, by design; a 30-minute CPU campaign filed
#: ``.storage_offset()`` inside one as a crash)
UNCAPTURABLE = (".storage_offset()", ".item()", ".tolist()", "graph_break(", "print(")


def captures_whole(body) -> bool:
    """A region body Dynamo can capture in one graph: straight-line statements (no ``if`` on
    data, no loops, no helper calls) whose templates hold nothing that graph-breaks."""
    return all(isinstance(s, Assign) and not any(u in s.template for u in UNCAPTURABLE) for s in body)


def nested_region(ch: ChoiceStream, scope: Scope, ctx) -> tuple:
    if not HAS_NESTED:
        return (), ()
    from .structure import _build_function
    v = scope.pick(lambda u: _free(u) and not u.type.is_bool)
    if v is None:
        return (), ()
    w = scope.pick(lambda u: _free(u) and u.type == v.type and u.name != v.name and u.bound <= v.bound)
    stmts = []
    if w is None:  # the same type, other values
        w_name = scope.fresh()
        stmts.append(Assign(w_name, "nested:roll", "torch.roll({0}, 1)", (Ref(v.name),), v.type))
    else:
        w_name = w.name
    h = _build_function(ch, scope, ctx, [v], f"nr{len(ctx.helpers)}", pure=True)
    made = {s.out: s for s in h.fn.body if isinstance(s, Assign)}
    res = made.get(h.fn.result)
    # the region must return a fresh tensor: an output aliasing its input is refused by the region
    if res is None or not res.op.startswith("helper:out:") or not scope.fits(h.result) \
            or not scope.within(h.result.dtype, h.result_bound) or not captures_whole(h.fn.body):
        return (), ()
    fn = dataclasses.replace(h.fn, nested=True)
    a, b = scope.fresh(), scope.fresh()
    scope.stmts.extend(stmts)
    scope.stmts.append(CallFn(a, fn.name, (Ref(v.name),), h.result))
    scope.stmts.append(CallFn(b, fn.name, (Ref(w_name),), h.result))
    return (a, b), (fn,)


BUILDERS = {"out_topk_max_norm": out_topk_max_norm, "widen_view_out": widen_view_out,
            "nested_region": nested_region}
