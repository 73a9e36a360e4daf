"""Indexing specs: index_select, gather, scatter/scatter_add, index_add/copy/fill, index_put,
masked_fill, take, take_along_dim, advanced indexing, select/slice_scatter, and their
in-place twins.

Contract: every index tensor is built inside the program from ``arange`` and the
indexed tensor's own run-time size, so it is in range on every call:
  perm   ``arange(n).flip(0)``       length n, unique  (any n, 0 included)
  half   ``arange(n) // 2``          length n, repeats (any n)
  mod K  ``arange(K) * 5 % n``       length K, repeats (only where n >= 1 on every call)
Ops whose result depends on the order of duplicate writes (scatter, index_copy,
index_put without accumulate) only get unique (perm) indices.
"""
from __future__ import annotations

from .ir import Lit, Ref, TensorType
from .ops import DT, Spec, bcast_to, castable_into, exact_of, writable
from .scope import Scope, Val


def _idx(s: Scope, x: Val, d: int, unique: bool, same_len: bool = False):
    """(expression with {0} = x, length dim) for a 1-D in-range index into dim d of x.

    same_len: the index must be as long as the dim (its source has x's shape).
    """
    n = x.type.shape[d]
    kinds = ["perm"] if unique else ["perm", "half"] + (["mod"] if s.min_dim(n) >= 1 and not same_len else [])
    kind = s.ch.choice(kinds)
    if kind == "perm":
        return f"torch.arange({{0}}.shape[{d}], device={{0}}.device).flip(0)", n
    if kind == "half":
        return f"(torch.arange({{0}}.shape[{d}], device={{0}}.device) // 2)", n
    k = s.ch.integer(1, 5)
    return f"(torch.arange({k}, device={{0}}.device) * 5 % {{0}}.shape[{d}])", k


def _lift(expr: str, d: int, rank: int) -> str:
    """Index 1-D -> shape (1,..,L,..,1) by None-indexing (works for empty indices too)."""
    if rank == 1:
        return expr
    return expr + "[%s]" % ", ".join(":" if i == d else "None" for i in range(rank))


def _pick_x(s: Scope, dtypes="any", rank_lo=1):
    return s.pick(lambda v: v.type.rank >= rank_lo and v.type.dtype in DT[dtypes])


def _src_like(s: Scope, x: Val, shape) -> tuple[str, list, float]:
    """A source operand of ``shape`` cast to x's dtype: another value, or x flipped."""
    o = s.pick(lambda v: v.type.shape == tuple(shape) and v is not x and v.root != x.root
               and castable_into(v.type.dtype, x.type.dtype) and v.type.dtype != "bool")
    if o is not None and x.type.dtype != "bool":
        return "{1}.to({0}.dtype)", [Ref(o.name)], o.bound
    return "{0}.flip(0)", [], x.bound


def index_select(s, spec):
    x = _pick_x(s)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    idx, n = _idx(s, x, d, unique=False)
    shape = x.type.shape[:d] + (n,) + x.type.shape[d + 1:]
    tmpl = "torch.index_select({0}, %d, %s)" % (d, idx) if spec.name == "torch.index_select" else \
        "{0}[%s%s]" % (":, " * d, idx)
    return s.assign(spec.name, tmpl, (Ref(x.name),), TensorType(shape, x.type.dtype), x.bound,
                    exact=exact_of(x.type.dtype, True, x)) is not None


def adv_index2(s, spec):
    """x[i, j] with two broadcast index tensors on dims 0 and 1."""
    x = s.pick(lambda v: v.type.rank >= 2 and s.min_dim(v.type.shape[0]) >= 1 and s.min_dim(v.type.shape[1]) >= 1)
    if x is None:
        return False
    k = s.ch.integer(1, 4)
    tmpl = "{0}[torch.arange(%d, device={0}.device) %% {0}.shape[0], (torch.arange(%d, device={0}.device) * 3 + 1) %% {0}.shape[1]]" % (k, k)
    return s.assign(spec.name, tmpl, (Ref(x.name),), TensorType((k,) + x.type.shape[2:], x.type.dtype), x.bound,
                    exact=exact_of(x.type.dtype, True, x)) is not None


def gather(s, spec):
    x = _pick_x(s)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    idx, n = _idx(s, x, d, unique=False)
    full = _lift(idx, d, x.type.rank)
    exp = ", ".join(f"{{0}}.shape[{i}]" if i != d else "-1" for i in range(x.type.rank))
    full = f"{full}.expand({exp})" if x.type.rank > 1 else full
    shape = x.type.shape[:d] + (n,) + x.type.shape[d + 1:]
    tmpl = ("torch.gather({0}, %d, %s)" if spec.name == "torch.gather" else
            "torch.take_along_dim({0}, %s, %d)") 
    tmpl = tmpl % ((d, full) if spec.name == "torch.gather" else (full, d))
    return s.assign(spec.name, tmpl, (Ref(x.name),), TensorType(shape, x.type.dtype), x.bound,
                    exact=exact_of(x.type.dtype, True, x)) is not None


def take(s, spec):
    x = _pick_x(s, rank_lo=0)
    if x is None or not s.nonempty(x.type):
        return False
    k = s.ch.integer(1, 6)
    return s.assign(spec.name, "torch.take({0}, torch.arange(%d, device={0}.device) * 7 %% {0}.numel())" % k, (Ref(x.name),),
                    TensorType((k,), x.type.dtype), x.bound, exact=exact_of(x.type.dtype, True, x)) is not None


def _scatter_like(s: Scope, spec: Spec, inplace: bool):
    """scatter / scatter_add / index_add / index_copy, out of place or in place."""
    pred = (lambda v: writable(v) and v.type.rank >= 1) if inplace else \
        (lambda v: v.type.rank >= 1 and v.type.dtype in DT["num"])
    x = s.pick(pred)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    accum = spec.kind in ("scatter_add", "index_add")
    idx, _n = _idx(s, x, d, unique=not accum, same_len=True)
    src, extra, sb = _src_like(s, x, x.type.shape)
    if spec.kind in ("scatter", "scatter_add"):
        idx = _lift(idx, d, x.type.rank)
        if x.type.rank > 1:
            idx += ".expand_as({0})"
    bound = x.bound + 2 * sb if accum else max(x.bound, sb)
    method = spec.kind + ("_" if inplace else "")
    tmpl = "{0}.%s(%d, %s, %s)" % (method, d, idx, src)
    args = (Ref(x.name),) + tuple(extra)
    if inplace:
        return s.mutate(spec.name, tmpl, args, x, bound, exact=x.exact and not accum)
    return s.assign(spec.name, tmpl, args, x.type, bound,
                    exact=exact_of(x.type.dtype, not accum, x)) is not None


def index_fill(s, spec):
    inplace = spec.name.endswith("_")
    x = s.pick((lambda v: writable(v) and v.type.rank >= 1) if inplace else
               (lambda v: v.type.rank >= 1 and v.type.dtype in DT["num"]))
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    idx, _ = _idx(s, x, d, unique=False)
    val = "-1.5" if x.type.is_float else "3"
    tmpl = "{0}.index_fill%s(%d, %s, %s)" % ("_" if inplace else "", d, idx, val)
    if inplace:
        return s.mutate(spec.name, tmpl, (Ref(x.name),), x, max(x.bound, 3), exact=x.exact)
    return s.assign(spec.name, tmpl, (Ref(x.name),), x.type, max(x.bound, 3),
                    exact=exact_of(x.type.dtype, True, x)) is not None


def index_put(s, spec):
    inplace = spec.name != "torch.index_put"
    x = s.pick((lambda v: writable(v) and v.type.rank >= 1) if inplace else
               (lambda v: v.type.rank >= 1 and v.type.dtype in DT["num"]))
    if x is None:
        return False
    accumulate = s.ch.boolean(0.4) and spec.name != "Tensor.__setitem__"
    o = s.pick(lambda v: v.type.rank < x.type.rank and bcast_to(x.type.shape[1:], v)
               and v.root != x.root and v.type.dtype != "bool" and castable_into(v.type.dtype, x.type.dtype))
    idx, _ = _idx(s, x, 0, unique=not accumulate, same_len=o is None)
    if o is not None:
        vals, args, vb = "{1}.to({0}.dtype)", (Ref(x.name), Ref(o.name)), o.bound
    else:
        vals, args, vb = "{0}.flip(0)", (Ref(x.name),), x.bound
    bound = x.bound + 2 * vb if accumulate else max(x.bound, vb)
    exact = x.exact and not accumulate
    if spec.name == "Tensor.__setitem__":
        return s.mutate(spec.name, "{0}[%s] = %s" % (idx, vals), args, x, bound, exact=exact)
    if spec.name == "Tensor.index_put_":
        return s.mutate(spec.name, "{0}.index_put_((%s,), %s, accumulate=%s)" % (idx, vals, accumulate),
                        args, x, bound, exact=exact)
    return s.assign(spec.name, "torch.index_put({0}, (%s,), %s, accumulate=%s)" % (idx, vals, accumulate),
                    args, x.type, bound, exact=exact_of(x.type.dtype, not accumulate, x)) is not None


def _mask_for(s: Scope, x: Val):
    m = s.pick(lambda v: v.type.is_bool and bcast_to(x.type.shape, v))
    if m is not None:
        return "{1}", [Ref(m.name)]
    if x.type.rank == 0:
        return None, []
    return "(torch.arange({0}.shape[-1], device={0}.device) % 3 == 1)", []


def masked_fill(s, spec):
    inplace = spec.name.endswith("_")
    x = s.pick((lambda v: writable(v)) if inplace else (lambda v: v.type.dtype in DT["numb"]))
    if x is None:
        return False
    mask, extra = _mask_for(s, x)
    if mask is None:
        return False
    val = "True" if x.type.is_bool else ("0.75" if x.type.is_float else "5")
    tmpl = "{0}.masked_fill%s(%s, %s)" % ("_" if inplace else "", mask, val)
    args = (Ref(x.name),) + tuple(extra)
    if inplace:
        return s.mutate(spec.name, tmpl, args, x, max(x.bound, 5), exact=x.exact)
    return s.assign(spec.name, tmpl, args, x.type, max(x.bound, 5),
                    exact=exact_of(x.type.dtype, True, x)) is not None


def scatter_slice(s, spec):
    x = s.pick(lambda v: v.type.rank >= 1 and v.type.dtype in DT["num"])
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    if spec.name == "torch.select_scatter":
        if s.min_dim(x.type.shape[d]) < 1:
            return False
        tmpl = "torch.select_scatter({0}, {0}.select(%d, 0) * 2, %d, -1)" % (d, d)
        bound = 2 * x.bound
    else:
        sl = ":, " * d + "::2"
        tmpl = "torch.slice_scatter({0}, {0}.flip(%d)[%s], %d, 0, None, 2)" % (d, sl, d)
        bound = x.bound
    return s.assign(spec.name, tmpl, (Ref(x.name),), x.type, bound,
                    exact=exact_of(x.type.dtype, True, x)) is not None


INDEX = (
    Spec("torch.index_select", "indexing", index_select, 0.6),
    Spec("Tensor.__getitem__[index]", "indexing", index_select, 0.5),
    Spec("Tensor.__getitem__[index2]", "indexing", adv_index2, 0.3),
    Spec("torch.gather", "indexing", gather, 0.5),
    Spec("torch.take_along_dim", "indexing", gather, 0.2),
    Spec("torch.take", "indexing", take, 0.2),
    Spec("Tensor.scatter", "indexing", lambda s, sp: _scatter_like(s, sp, False), 0.4, kind="scatter"),
    Spec("Tensor.scatter_add", "indexing", lambda s, sp: _scatter_like(s, sp, False), 0.4, kind="scatter_add"),
    Spec("Tensor.index_add", "indexing", lambda s, sp: _scatter_like(s, sp, False), 0.3, kind="index_add"),
    Spec("Tensor.index_copy", "indexing", lambda s, sp: _scatter_like(s, sp, False), 0.3, kind="index_copy"),
    Spec("Tensor.scatter_", "inplace", lambda s, sp: _scatter_like(s, sp, True), 0.3, kind="scatter"),
    Spec("Tensor.scatter_add_", "inplace", lambda s, sp: _scatter_like(s, sp, True), 0.3, kind="scatter_add"),
    Spec("Tensor.index_add_", "inplace", lambda s, sp: _scatter_like(s, sp, True), 0.4, kind="index_add"),
    Spec("Tensor.index_copy_", "inplace", lambda s, sp: _scatter_like(s, sp, True), 0.2, kind="index_copy"),
    Spec("Tensor.index_fill", "indexing", index_fill, 0.3),
    Spec("Tensor.index_fill_", "inplace", index_fill, 0.3),
    Spec("torch.index_put", "indexing", index_put, 0.3),
    Spec("Tensor.index_put_", "inplace", index_put, 0.5),
    Spec("Tensor.__setitem__", "inplace", index_put, 0.5),
    Spec("Tensor.masked_fill", "indexing", masked_fill, 0.6),
    Spec("Tensor.masked_fill_", "inplace", masked_fill, 0.5),
    Spec("torch.select_scatter", "indexing", scatter_slice, 0.2),
    Spec("torch.slice_scatter", "indexing", scatter_slice, 0.2),
)
_unused = Lit
