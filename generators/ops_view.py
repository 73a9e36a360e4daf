"""View and shape specs: transpose/permute, slicing, select/narrow, expand, (un)squeeze,
flatten/unflatten, view/reshape, chunk/split/unbind, cat/stack, pad, diagonal, unfold,
as_strided, dtype-reinterpreting views, flip/roll/repeat.

Contract: views are assigned with ``view_of`` (they share their base's storage
root, so in-place ops never write through an overlapping operand); views whose
elements overlap (expand, unfold with step < size, as_strided) are not
writable. ``view`` is only drawn on values statically known to be contiguous.
Every size an op reads is checked against the schedule's smallest value.
"""
from __future__ import annotations

from . import shapes
from .ir import Lit, Ref, TensorType
from .ops import Spec, exact_of
from .scope import Scope, Val


def _t(x: Val, shape) -> TensorType:
    return TensorType(tuple(shape), x.type.dtype)


def _view(s: Scope, spec: Spec, x: Val, template: str, shape, args=(), writable=None, contig=False):
    return s.assign(spec.name, template, (Ref(x.name),) + tuple(args), _t(x, shape), x.bound, view_of=x,
                    exact=exact_of(x.type.dtype, True, x), writable=writable, contig=contig) is not None


def _copy(s: Scope, spec: Spec, x: Val, template: str, shape, args=(), contig=False):
    return s.assign(spec.name, template, (Ref(x.name),) + tuple(args), _t(x, shape), x.bound,
                    exact=exact_of(x.type.dtype, True, x), contig=contig) is not None


def _rank(s: Scope, lo: int, hi: int = 9) -> Val | None:
    return s.pick(lambda v: lo <= v.type.rank <= hi)


def transpose(s, spec):
    x = _rank(s, 2)
    if x is None:
        return False
    r = x.type.rank
    d0, d1 = s.ch.integer(0, r - 1), s.ch.integer(0, r - 1)
    if d0 == d1:
        d1 = (d0 + 1) % r
    shape = list(x.type.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    tmpl = {"Tensor.transpose": "{0}.transpose({1}, {2})", "torch.swapaxes": "torch.swapaxes({0}, {1}, {2})",
            "torch.movedim": None}[spec.name]
    if tmpl is None:  # movedim: move d0 to d1
        shape = list(x.type.shape)
        shape.insert(d1, shape.pop(d0))
        tmpl = "torch.movedim({0}, {1}, {2})"
    return _view(s, spec, x, tmpl, shape, (Lit(d0), Lit(d1)))


def t2(s, spec):
    x = _rank(s, 2, 2)
    return x is not None and _view(s, spec, x, "{0}.t()", x.type.shape[::-1])


def permute(s, spec):
    x = _rank(s, 2)
    if x is None:
        return False
    perm = list(range(x.type.rank))
    for i in range(len(perm) - 1, 0, -1):
        j = s.ch.integer(0, i)
        perm[i], perm[j] = perm[j], perm[i]
    return _view(s, spec, x, "{0}.permute(%s)" % ", ".join(map(str, perm)),
                 [x.type.shape[p] for p in perm])


def unsqueeze(s, spec):
    x = _rank(s, 0, 4)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank)
    return _view(s, spec, x, "{0}.unsqueeze({1})", x.type.shape[:d] + (1,) + x.type.shape[d:], (Lit(d),),
                 contig=x.contig)


def squeeze(s, spec):
    x = s.pick(lambda v: 1 in v.type.shape)
    if x is None:
        return False
    d = s.ch.choice([i for i, e in enumerate(x.type.shape) if e == 1])
    return _view(s, spec, x, "{0}.squeeze({1})", x.type.shape[:d] + x.type.shape[d + 1:], (Lit(d),),
                 contig=x.contig)


def flatten(s, spec):
    x = _rank(s, 2)
    if x is None:
        return False
    a = s.ch.integer(0, x.type.rank - 2)
    b = s.ch.integer(a + 1, x.type.rank - 1)
    shape = x.type.shape[:a] + (shapes.numel(x.type.shape[a:b + 1]),) + x.type.shape[b + 1:]
    # flatten aliases a contiguous input and copies otherwise: an alias of x that is never written.
    return s.assign(spec.name, "{0}.flatten({1}, {2})", (Ref(x.name), Lit(a), Lit(b)), _t(x, shape),
                    x.bound, view_of=x, writable=False, exact=exact_of(x.type.dtype, True, x),
                    contig=x.contig) is not None


def ravel(s, spec):
    x = _rank(s, 1)
    return x is not None and s.assign(spec.name, "torch.ravel({0})", (Ref(x.name),),
                                      _t(x, (shapes.numel(x.type.shape),)), x.bound, view_of=x,
                                      writable=False, exact=exact_of(x.type.dtype, True, x),
                                      contig=True) is not None


def _merge_shape(s: Scope, x: Val):
    """Merge two neighbouring dims: (shape, runtime size expressions)."""
    r = x.type.rank
    a = s.ch.integer(0, r - 2)
    shape = x.type.shape[:a] + (shapes.mul(x.type.shape[a], x.type.shape[a + 1]),) + x.type.shape[a + 2:]
    exprs = [f"{{0}}.shape[{i}]" for i in range(a)] + [f"{{0}}.shape[{a}] * {{0}}.shape[{a + 1}]"] + \
        [f"{{0}}.shape[{i}]" for i in range(a + 2, r)]
    return shape, exprs


def view(s, spec):
    x = s.pick(lambda v: v.contig and v.type.rank >= 2)
    if x is None:
        return False
    shape, exprs = _merge_shape(s, x)
    return _view(s, spec, x, "{0}.view(%s)" % ", ".join(exprs), shape, contig=True)


def reshape(s, spec):
    x = _rank(s, 1)
    if x is None:
        return False
    if x.type.rank >= 2 and s.ch.boolean(0.6):
        shape, exprs = _merge_shape(s, x)
    else:  # split off a unit dim
        d = s.ch.integer(0, x.type.rank - 1)
        shape = x.type.shape[:d] + (1,) + x.type.shape[d:]
        exprs = [f"{{0}}.shape[{i}]" for i in range(d)] + ["1"] + \
            [f"{{0}}.shape[{i}]" for i in range(d, x.type.rank)]
    tmpl = "{0}.reshape(%s)" % ", ".join(exprs)
    if len(exprs) == 1:
        tmpl = "{0}.reshape(%s,)" % exprs[0]
    return s.assign(spec.name, tmpl, (Ref(x.name),), _t(x, shape), x.bound, view_of=x, writable=False,
                    exact=exact_of(x.type.dtype, True, x), contig=x.contig) is not None


def unflatten(s, spec):
    x = _rank(s, 1, 4)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    e = x.type.shape[d]
    if isinstance(e, int) and e % 2 == 0 and e > 0:
        sizes, new = f"(2, {e // 2})", (2, e // 2)
    else:
        sizes, new = f"({{0}}.shape[{d}], 1)", (e, 1)
    return _view(s, spec, x, "{0}.unflatten(%d, %s)" % (d, sizes),
                 x.type.shape[:d] + new + x.type.shape[d + 1:], contig=x.contig)


def step_slice(s, spec):
    x = _rank(s, 1)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    step = s.ch.choice((2, 3))
    start = s.ch.integer(0, 1) if s.min_dim(x.type.shape[d]) >= 1 else 0
    index = ":, " * d + (f"{start}::{step}" if start else f"::{step}")
    n = x.type.shape[d] if not start else f"({x.type.shape[d]})-1"
    shape = x.type.shape[:d] + (shapes.ceil_div(n, step),) + x.type.shape[d + 1:]
    return _view(s, spec, x, "{0}[%s]" % index, shape)


def range_slice(s, spec):
    x = _rank(s, 1)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    if s.min_dim(x.type.shape[d]) < 1:
        return False
    index = "..., 1:" if d == x.type.rank - 1 and s.ch.boolean() else ":, " * d + "1:"
    shape = x.type.shape[:d] + (f"({x.type.shape[d]})-1",) + x.type.shape[d + 1:]
    return _view(s, spec, x, "{0}[%s]" % index, shape, contig=x.contig and d == 0)


def select(s, spec):
    x = _rank(s, 1)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    if s.min_dim(x.type.shape[d]) < 1:
        return False
    i = s.ch.choice((0, -1))
    return _view(s, spec, x, "{0}.select({1}, {2})", x.type.shape[:d] + x.type.shape[d + 1:], (Lit(d), Lit(i)),
                 contig=x.contig and d == 0)


def narrow(s, spec):
    x = _rank(s, 1)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    lo = s.min_dim(x.type.shape[d])
    if lo < 1:
        return False
    start = s.ch.integer(0, min(lo - 1, 2))
    length = s.ch.integer(1 if lo - start >= 1 else 0, lo - start)
    return _view(s, spec, x, "{0}.narrow({1}, {2}, {3})",
                 x.type.shape[:d] + (length,) + x.type.shape[d + 1:], (Lit(d), Lit(start), Lit(length)))


def size_expr(s: Scope, dim) -> str | None:
    """A runtime expression for a dim: a literal, or ``v.shape[i]`` of a value having it."""
    if isinstance(dim, int):
        return str(dim)
    for v in s.all_vals():
        for i, e in enumerate(v.type.shape):
            if e == dim:
                return f"{v.name}.shape[{i}]"
    return None


def expand(s, spec):
    x = s.pick(lambda v: v.type.rank <= 3)
    if x is None:
        return False
    syms = sorted({d for v in s.all_vals() for d in v.type.shape if isinstance(d, str) and "(" not in d})
    if not syms:
        return False
    new = [s.ch.choice(syms) if e == 1 and s.ch.boolean(0.7) else e for e in x.type.shape]
    if s.ch.boolean(0.5) or new == list(x.type.shape):
        new = [s.ch.choice(syms)] + new
    old = [None] * (len(new) - x.type.rank) + list(x.type.shape)
    exprs = ["-1" if o is not None and e == o else size_expr(s, e) for e, o in zip(new, old)]
    if None in exprs:
        return False
    if spec.name == "torch.broadcast_to":
        tmpl = "torch.broadcast_to({0}, (%s,))" % ", ".join(
            e if e != "-1" else f"{{0}}.shape[{i - len(new) + x.type.rank}]" for i, e in enumerate(exprs))
    else:
        tmpl = "{0}.expand(%s)" % ", ".join(exprs)
    return _view(s, spec, x, tmpl, new, writable=False)


def expand_as(s, spec):
    x = _rank(s, 0)
    if x is None:
        return False
    o = s.pick(lambda v: v is not x and shapes.broadcast(v.type.shape, x.type.shape) == v.type.shape)
    if o is None:
        return False
    return s.assign(spec.name, "{0}.expand_as({1})", (Ref(x.name), Ref(o.name)), _t(x, o.type.shape), x.bound,
                    view_of=x, writable=False, exact=exact_of(x.type.dtype, True, x)) is not None


def chunk(s, spec):
    x = _rank(s, 1)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    lo = s.min_dim(x.type.shape[d])
    if spec.name == "torch.chunk":
        if lo < 1:
            return False
        k = s.ch.choice((2, 3))
        return _view(s, spec, x, "torch.chunk({0}, %d, %d)[0]" % (k, d),
                     x.type.shape[:d] + (shapes.ceil_div(x.type.shape[d], k),) + x.type.shape[d + 1:])
    if spec.name == "torch.split":
        if lo < 1:
            return False
        k = s.ch.integer(1, min(lo, 4))
        return _view(s, spec, x, "torch.split({0}, %d, %d)[0]" % (k, d), x.type.shape[:d] + (k,) + x.type.shape[d + 1:])
    if lo < 1:  # unbind
        return False
    i = s.ch.integer(0, min(lo - 1, 2))
    return _view(s, spec, x, "torch.unbind({0}, %d)[%d]" % (d, i), x.type.shape[:d] + x.type.shape[d + 1:])


def cat(s, spec):
    a = _rank(s, 1)
    if a is None:
        return False
    b = s.pick(lambda v: v.type.shape == a.type.shape and v is not a) or a
    dtype = _promote(a.type.dtype, b.type.dtype)
    exact = exact_of(dtype, True, a, b)
    if spec.name == "torch.stack":
        d = s.ch.integer(0, a.type.rank)
        shape = a.type.shape[:d] + (2,) + a.type.shape[d:]
        return s.assign(spec.name, "torch.stack([{0}, {1}], {2})", (Ref(a.name), Ref(b.name), Lit(d)),
                        TensorType(shape, dtype), max(a.bound, b.bound), exact=exact, contig=True) is not None
    d = s.ch.integer(0, a.type.rank - 1)
    shape = a.type.shape[:d] + (shapes.add(a.type.shape[d], b.type.shape[d]),) + a.type.shape[d + 1:]
    return s.assign(spec.name, "torch.cat([{0}, {1}], {2})", (Ref(a.name), Ref(b.name), Lit(d)),
                    TensorType(shape, dtype), max(a.bound, b.bound), exact=exact) is not None


def _promote(a, b):
    from .scope import promote
    return promote(a, b)


def pad(s, spec):
    x = s.pick(lambda v: v.type.rank >= 1 and v.type.dtype != "bool")
    if x is None:
        return False
    lo, hi = s.ch.integer(0, 2), s.ch.integer(0, 3)
    nd = s.ch.integer(1, min(2, x.type.rank))
    shape = list(x.type.shape)
    pads = []
    for k in range(nd):
        pads += [lo, hi] if k == 0 else [hi, lo]
        shape[-1 - k] = shapes.add(shape[-1 - k], lo + hi)
    return _copy(s, spec, x, "torch.nn.functional.pad({0}, %s)" % repr(tuple(pads)), shape)


def diagonal(s, spec):
    x = s.pick(lambda v: v.type.rank >= 2 and v.type.shape[-1] == v.type.shape[-2])
    if x is None:
        return False
    return _view(s, spec, x, "{0}.diagonal(0, -2, -1)" if spec.name == "Tensor.diagonal"
                 else "torch.diagonal({0}, 0, -2, -1)", x.type.shape[:-2] + (x.type.shape[-1],))


def unfold(s, spec):
    x = _rank(s, 1, 4)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    lo = s.min_dim(x.type.shape[d])
    if lo < 2:
        return False
    size = s.ch.integer(1, min(lo, 3))
    step = s.ch.integer(1, 3)
    n = x.type.shape[d]
    m = (n - size) // step + 1 if isinstance(n, int) else f"(({n})-{size})//{step}+1"
    shape = x.type.shape[:d] + (m,) + x.type.shape[d + 1:] + (size,)
    return _view(s, spec, x, "{0}.unfold({1}, {2}, {3})", shape, (Lit(d), Lit(size), Lit(step)),
                 writable=x.writable and step >= size)


def as_strided(s, spec):
    x = _rank(s, 1, 4)
    if x is None or s.min_dim(x.type.shape[-1]) < 2 or not s.nonempty(x.type):
        return False
    if s.ch.boolean():  # x[..., 0] spelled with strides
        tmpl = "{0}.contiguous().as_strided({0}.shape[:-1], {0}.contiguous().stride()[:-1])"
        shape = x.type.shape[:-1]
    else:               # the tail of the first row, at a storage offset
        tmpl = "{0}.contiguous().as_strided(({0}.shape[-1] - 1,), (1,), {0}.contiguous().storage_offset() + 1)"
        shape = (f"({x.type.shape[-1]})-1",)
    return _view(s, spec, x, tmpl, shape, writable=False)


def dtype_view(s, spec):
    """Reinterpreting views that keep values meaningful: int64->int32 pairs, bool->uint8, uint8->int8."""
    x = s.pick(lambda v: (v.type.dtype == "int64" and v.contig and v.type.rank >= 1)
               or v.type.dtype == "bool" or (v.type.dtype == "uint8" and v.bound <= 60))
    if x is None:
        return False
    if x.type.dtype == "int64":
        shape, dst = x.type.shape[:-1] + (shapes.mul(x.type.shape[-1], 2),), "int32"
    else:
        shape, dst = x.type.shape, "uint8" if x.type.dtype == "bool" else "int8"
    return s.assign(spec.name, "{0}.view(torch.%s)" % dst, (Ref(x.name),), TensorType(shape, dst), x.bound,
                    view_of=x, contig=x.contig) is not None


def contiguous(s, spec):
    x = s.pick(lambda v: True)
    return x is not None and s.assign(spec.name, "{0}.contiguous()", (Ref(x.name),), x.type, x.bound,
                                      view_of=x, writable=False, exact=exact_of(x.type.dtype, True, x),
                                      contig=True) is not None


def flip_roll(s, spec):
    x = _rank(s, 1)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    tmpl = {"torch.flip": "torch.flip({0}, ({1},))", "torch.roll": "torch.roll({0}, 1, {1})"}[spec.name]
    return _copy(s, spec, x, tmpl, x.type.shape, (Lit(d),))


def repeat(s, spec):
    x = _rank(s, 1, 3)
    if x is None:
        return False
    reps = [s.ch.integer(1, 2) for _ in range(x.type.rank)]
    shape = [shapes.mul(e, k) if k > 1 else e for e, k in zip(x.type.shape, reps)]
    name = "{0}.repeat(%s)" if spec.name == "Tensor.repeat" else "torch.tile({0}, (%s,))"
    return _copy(s, spec, x, name % ", ".join(map(str, reps)), shape)


def tri(s, spec):
    x = s.pick(lambda v: v.type.rank >= 2 and v.type.dtype != "bool")
    if x is None:
        return False
    k = s.ch.integer(-1, 1)
    return _copy(s, spec, x, "%s({0}, %d)" % (spec.name, k), x.type.shape)


def diag_embed(s, spec):
    x = s.pick(lambda v: 1 <= v.type.rank <= 3)
    if x is None:
        return False
    return _copy(s, spec, x, "torch.diag_embed({0})", x.type.shape + (x.type.shape[-1],))


VIEW = (
    Spec("Tensor.transpose", "view", transpose, 1.0),
    Spec("torch.swapaxes", "view", transpose, 0.3),
    Spec("torch.movedim", "view", transpose, 0.3),
    Spec("Tensor.t", "view", t2, 0.4),
    Spec("Tensor.permute", "view", permute, 0.7),
    Spec("Tensor.unsqueeze", "view", unsqueeze, 0.7),
    Spec("Tensor.squeeze", "view", squeeze, 0.5),
    Spec("Tensor.flatten", "shape", flatten, 0.6),
    Spec("torch.ravel", "shape", ravel, 0.3),
    Spec("Tensor.view", "view", view, 0.7),
    Spec("Tensor.reshape", "shape", reshape, 0.6),
    Spec("Tensor.unflatten", "view", unflatten, 0.4),
    Spec("Tensor.__getitem__", "view", step_slice, 0.8),
    Spec("Tensor.__getitem__[range]", "view", range_slice, 0.6),
    Spec("Tensor.select", "view", select, 0.5),
    Spec("Tensor.narrow", "view", narrow, 0.5),
    Spec("Tensor.expand", "view", expand, 0.6),
    Spec("torch.broadcast_to", "view", expand, 0.3),
    Spec("Tensor.expand_as", "view", expand_as, 0.3),
    Spec("torch.chunk", "view", chunk, 0.4),
    Spec("torch.split", "view", chunk, 0.4),
    Spec("torch.unbind", "view", chunk, 0.3),
    Spec("torch.cat", "shape", cat, 0.7),
    Spec("torch.stack", "shape", cat, 0.4),
    Spec("torch.nn.functional.pad", "shape", pad, 0.5),
    Spec("Tensor.diagonal", "view", diagonal, 0.4),
    Spec("torch.diagonal", "view", diagonal, 0.2),
    Spec("Tensor.unfold", "view", unfold, 0.4),
    Spec("Tensor.as_strided", "view", as_strided, 0.3),
    Spec("Tensor.view[dtype]", "view", dtype_view, 0.4),
    Spec("Tensor.contiguous", "copy", contiguous, 0.4),
    Spec("torch.flip", "shape", flip_roll, 0.4),
    Spec("torch.roll", "shape", flip_roll, 0.4),
    Spec("Tensor.repeat", "shape", repeat, 0.3),
    Spec("torch.tile", "shape", repeat, 0.2),
    Spec("torch.tril", "shape", tri, 0.3),
    Spec("torch.triu", "shape", tri, 0.3),
    Spec("torch.diag_embed", "shape", diag_embed, 0.2),
)

#: the names of the ops above that return a view of their operand (a write through one writes it)
VIEW_OPS = frozenset(s.name for s in VIEW if s.family == "view")
