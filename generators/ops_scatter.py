"""Scatter and index reductions: ``scatter_reduce`` / ``index_reduce`` with every reduction.

Contract: specs (``ops.Spec`` protocol) for ``Tensor.scatter_reduce`` (out of
place and in place) and ``Tensor.index_reduce`` with sum, prod, mean, amax and
amin, ``include_self`` True or False, on float values (differentiable, so
backward runs). The index is built in the program from ``arange(n) // 2``:
every target gets at most two sources, some get none (then
``include_self=False`` leaves the target as it was), and no index can leave
range. ``index_reduce`` also takes a source twice as long as the target dim (indexed
``arange(2n) // 2``: every target gets two sources). amax/amin send gradient to every tied element, so they only take raw
float32/float64 inputs, whose seeded values never tie.
"""
from __future__ import annotations

from .ir import Ref, TensorType
from .ops import Spec, writable

REDUCES = ("sum", "prod", "mean", "amax", "amin")
#: chance that an index_reduce's source is longer than its target dim (twice: ``torch.cat`` of
#: the source and an affine copy, indexed ``arange(2n) // 2``)
LONG_SOURCE_P = 0.5
INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def _operands(s, reduce: str):
    if reduce in ("amax", "amin"):
        ok = lambda v: v.is_input and v.type.dtype in ("float32", "float64") and v.type.rank >= 1  # noqa: E731
    else:
        ok = lambda v: v.type.is_float and v.type.rank >= 1 and v.bound <= 8  # noqa: E731
    x = s.pick(ok)
    if x is None:
        return None
    src = s.pick(lambda v: ok(v) and v.type.shape == x.type.shape and v.type.dtype == x.type.dtype and v is not x)
    return x, src


def _bound(reduce: str, a: float, b: float) -> float:
    return {"sum": a + 2 * b, "prod": max(a, 1.0) * max(b, 1.0) ** 2}.get(reduce, max(a, b))


def scatter_reduce(s, spec):
    reduce = s.ch.choice(REDUCES if spec.name != "Tensor.index_reduce" else INDEX_REDUCES)
    got = _operands(s, reduce)
    if got is None:
        return False
    x, src = got
    d = s.ch.integer(0, x.type.rank - 1)
    inc = s.ch.boolean(0.4)
    srcs = "{1}" if src is not None else "({0} * 0.5 + 0.25)"
    sb = src.bound if src is not None else x.bound * 0.5 + 0.25
    args = (Ref(x.name),) + ((Ref(src.name),) if src is not None else ())
    ar = "torch.arange({0}.shape[%d], device={0}.device) // 2" % d
    if spec.name == "Tensor.index_reduce":
        if s.ch.boolean(LONG_SOURCE_P):  # twice as many sources as targets: every target gets two
            srcs = f"torch.cat(({srcs}, {srcs} * 0.5 + 0.25), {d})"
            ar = "torch.arange(2 * {0}.shape[%d], device={0}.device) // 2" % d
            sb = max(sb, sb * 0.5 + 0.25)
        tmpl = f"{{0}}.index_reduce({d}, {ar}, {srcs}, '{reduce}', include_self={inc})"
    else:
        view = ", ".join("-1" if i == d else "1" for i in range(x.type.rank))
        idx = f"({ar}).view({view}).expand_as({{0}})"
        tmpl = f"{{0}}.scatter_reduce{'_' if spec.name.endswith('_') else ''}({d}, {idx}, {srcs}, '{reduce}', " \
               f"include_self={inc})"
    bound = _bound(reduce, x.bound, sb)
    if spec.name.endswith("_"):
        if not writable(x) or (src is not None and src.root == x.root):
            return False
        return s.mutate(spec.name, tmpl, args, x, bound, exact=False)
    return s.assign(spec.name, tmpl, args, x.type, bound) is not None


SCATTER = (
    Spec("Tensor.scatter_reduce", "index", scatter_reduce, 0.5),
    Spec("Tensor.scatter_reduce_", "inplace", scatter_reduce, 0.15),
    Spec("Tensor.index_reduce", "index", scatter_reduce, 0.3),
)
_ = TensorType
