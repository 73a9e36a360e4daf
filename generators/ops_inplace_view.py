"""In-place view ops: ``unsqueeze_``, ``squeeze_``, ``transpose_``, ``t_``, ``as_strided_``, ``resize_``.

Contract: specs (``ops.Spec`` protocol) that change a tensor's metadata in
place. They only apply in the top-level body (never inside a branch, loop,
helper or module forward), to a value of that body, so every later statement
sees one static type: the value's ``Val.type`` is updated to the new shape
after the statement. ``as_strided_`` and ``resize_`` keep the element count
and only take contiguous values that own their storage from offset 0, so
they never reach memory outside the value or uninitialised memory.
"""
from __future__ import annotations

from dataclasses import replace

from . import shapes
from .ir import Ref, TensorType
from .ops import Spec


def _target(s, pred):
    if s.parent is not None or getattr(s, "readonly", False):
        return None
    cands = [v for v in s.vals if v.writable and not v.name.startswith("self.") and pred(v)]
    made = [v for v in cands if not v.is_input]
    if made and s.ch.boolean(0.75):  # mostly values the graph makes; inputs' metadata less often
        cands = made
    return s.ch.choice(cands) if cands else None


def _retype(s, x, shape, contig) -> None:
    x.type = replace(x.type, shape=tuple(shape))
    x.contig = contig


def inplace_view(s, spec):
    op = spec.name.split(".")[1]
    ch = s.ch
    if op == "unsqueeze_":
        x = _target(s, lambda v: v.type.rank <= 4)
        if x is None:
            return False
        d = ch.integer(0, x.type.rank)
        shape = x.type.shape[:d] + (1,) + x.type.shape[d:]
        tmpl, contig = "{0}.unsqueeze_(%d)" % d, x.contig
    elif op == "squeeze_":
        x = _target(s, lambda v: 1 in v.type.shape)
        if x is None:
            return False
        d = ch.choice([i for i, e in enumerate(x.type.shape) if e == 1])
        shape = x.type.shape[:d] + x.type.shape[d + 1:]
        tmpl, contig = "{0}.squeeze_(%d)" % d, x.contig
    elif op == "transpose_":
        x = _target(s, lambda v: v.type.rank >= 2)
        if x is None:
            return False
        a = ch.integer(0, x.type.rank - 2)
        b = ch.integer(a + 1, x.type.rank - 1)
        sh = list(x.type.shape)
        sh[a], sh[b] = sh[b], sh[a]
        shape, tmpl, contig = sh, "{0}.transpose_(%d, %d)" % (a, b), False
    elif op == "t_":
        x = _target(s, lambda v: v.type.rank == 2)
        if x is None:
            return False
        shape, tmpl, contig = x.type.shape[::-1], "{0}.t_()", False
    else:  # as_strided_ / resize_: contiguous values that own their storage
        x = _target(s, lambda v: v.contig and not v.is_input and v.root == v.name and v.type.rank >= 1)
        if x is None:
            return False
        n = shapes.numel(x.type.shape)
        if op == "resize_":
            if x.type.rank >= 2 and ch.boolean():
                sh = list(x.type.shape)
                sh[0], sh[1] = sh[1], sh[0]  # same element count, rows reinterpreted
                shape = sh
                dims = [1, 0] + list(range(2, x.type.rank))
                tmpl = "{0}.resize_(%s)" % ", ".join(f"{{0}}.shape[{i}]" for i in dims)
            else:
                shape, tmpl = (n,), "{0}.resize_({0}.numel())"
            contig = True
        else:  # a 1-D window over every other element of the storage
            shape = (shapes.ceil_div(n, 2),)
            tmpl, contig = "{0}.as_strided_((({0}.numel() + 1) // 2,), (2,), {0}.storage_offset())", False
    if not s.mutate(spec.name, tmpl, (Ref(x.name),), x, x.bound, exact=True):
        return False
    _retype(s, x, shape, contig)
    return True


INPLACE_VIEW = (
    Spec("Tensor.unsqueeze_", "inplace_view", inplace_view, 0.2),
    Spec("Tensor.squeeze_", "inplace_view", inplace_view, 0.15),
    Spec("Tensor.transpose_", "inplace_view", inplace_view, 0.2),
    Spec("Tensor.t_", "inplace_view", inplace_view, 0.15),
    Spec("Tensor.as_strided_", "inplace_view", inplace_view, 0.1),
    Spec("Tensor.resize_", "inplace_view", inplace_view, 0.1),
)
_ = TensorType
