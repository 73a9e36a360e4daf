"""Gradient-heavy forms: in-place updates of non-leaf tensors that require grad, and losses
with kinks (huber, margin ranking, hinge embedding, kl_div).

Contract: specs (``ops.Spec`` protocol). ``nonleaf_inplace`` makes a fresh
non-leaf ``v = x * c`` and updates it in place at once with an op whose
backward needs nothing the update overwrites (add_/sub_ of another value,
mul_/div_ by a constant, or relu_/sigmoid_/tanh_, which save their result).
Its op names end in ``[nonleaf]``: ``ir.tainted_sources`` does not count
these writes, so the inputs behind ``x`` may still require grad, which is the
point. The losses shift their first operand by 0.3183 (no round constant),
so values the program makes exactly (zeros, ones, 1.5, ...) can never sit on a
kink; margins and deltas are literals or, where the program has one, a Python
float argument that changes between calls.
"""
from __future__ import annotations

import math

from . import shapes
from .ir import Ref, TensorType
from .ops import Spec, max_size

F = "torch.nn.functional."
SHIFT = 0.3183
NONLEAF_OPS = ("add_", "sub_", "mul_", "div_", "relu_", "sigmoid_", "tanh_")
GRAD_SAFE_SUFFIX = "[nonleaf]"


def nonleaf_inplace(s, spec):
    x = s.pick(lambda v: v.type.dtype in ("float32", "float64") and not v.name.startswith("self."))
    if x is None:
        return False
    op = spec.name.split(".")[1].split("[")[0]
    v = s.assign("torch.mul", "{0} * 1.5", (Ref(x.name),), x.type, x.bound * 1.5)
    if v is None:
        return False
    if op in ("add_", "sub_"):
        y = s.pick(lambda u: u.type.is_float and u is not v and u.root != v.root
                   and shapes.broadcast(v.type.shape, u.type.shape) == tuple(v.type.shape))
        if y is None:
            return s.mutate(spec.name, "{0}.%s(1.25)" % op, (Ref(v.name),), v, v.bound + 1.25, exact=False)
        return s.mutate(spec.name, "{0}.%s({1}.to({0}.dtype))" % op, (Ref(v.name), Ref(y.name)), v,
                        v.bound + y.bound, exact=False)
    if op in ("mul_", "div_"):
        return s.mutate(spec.name, "{0}.%s(0.75)" % op, (Ref(v.name),), v,
                        v.bound * (0.75 if op == "mul_" else 1 / 0.75), exact=False)
    return s.mutate(spec.name, "{0}.%s()" % op, (Ref(v.name),), v, v.bound if op == "relu_" else 1.0,
                    exact=False) or True  # v alone is still a well-typed statement


def _param(s, literals):
    """A literal, or the name of a float argument/global (its value changes between calls)."""
    names = getattr(s, "float_scalars", ())
    if names and s.ch.boolean(0.6):
        return s.ch.choice(names), 2.0
    v = s.ch.choice(literals)
    return repr(v), abs(v)


def _red(s, x):
    red = s.ch.choice(("mean", "sum", "none"))
    if red == "mean" and s.min_dim(shapes.numel(x.type.shape)) < 1:
        red = "sum"
    n = max(max_size(s, shapes.numel(x.type.shape)), 1)
    return red, (x.type.shape if red == "none" else ()), (n if red == "sum" else 1)


def kink_loss(s, spec):
    kind = spec.name.rsplit(".", 1)[1]
    dts = ("float32", "float64") if kind == "kl_div" else ("float32", "float64", "bfloat16")
    x = s.pick(lambda v: v.type.dtype in dts and v.type.rank >= 1)
    if x is None:
        return False
    o = s.pick(lambda v: v.type.shape == x.type.shape and v.type.is_float and v is not x)
    other = "{1}.to({0}.dtype)" if o is not None else "{0}.flip(0)"
    args = (Ref(x.name),) + ((Ref(o.name),) if o is not None else ())
    ob = o.bound if o is not None else x.bound
    red, shape, scale = _red(s, x)
    sign = "((torch.arange({0}.numel(), device={0}.device) % 2) * 2 - 1).to({0}.dtype).view({0}.shape)"
    a = f"({{0}} + {SHIFT})"
    if kind == "huber_loss":
        p, pb = _param(s, (0.5, 1.0, 1.75))
        p = f"abs({p}) + 0.0625" if not p[0].isdigit() else p
        tmpl = f"{F}huber_loss({a}, {other}, reduction='{red}', delta={p})"
        bound = (x.bound + ob + 1) ** 2 * scale
    elif kind == "margin_ranking_loss":
        p, pb = _param(s, (0.5, 1.0, -0.25))
        tmpl = f"{F}margin_ranking_loss({a}, {other}, {sign}, margin={p}, reduction='{red}')"
        bound = (x.bound + ob + 1 + pb) * scale
    elif kind == "hinge_embedding_loss":
        p, pb = _param(s, (0.5, 1.0, 2.0))
        tmpl = f"{F}hinge_embedding_loss({a}, {sign}, margin={p}, reduction='{red}')"
        bound = (x.bound + 1 + pb) * scale
    else:  # kl_div of two distributions over the last dim (softmax is never 0: no log(0) point)
        if s.min_dim(x.type.shape[-1]) < 1:
            return False
        red = "batchmean" if red == "mean" and x.type.rank >= 2 and s.ch.boolean() else red
        log_t = s.ch.boolean()
        tgt = f"torch.log_softmax({other}, -1)" if log_t else f"torch.softmax({other}, -1)"
        tmpl = f"{F}kl_div(torch.log_softmax({{0}}, -1), {tgt}, reduction='{red}', log_target={log_t})"
        n = max(max_size(s, x.type.shape[-1]), 1)
        bound = (2 * x.bound + 2 * ob + math.log(n) + 1) * scale
    return s.assign(spec.name, tmpl, args, TensorType(shape, x.type.dtype), bound) is not None


GRAD = (
    Spec("Tensor.add_[nonleaf]", "inplace", nonleaf_inplace, 0.2),
    Spec("Tensor.sub_[nonleaf]", "inplace", nonleaf_inplace, 0.05),
    Spec("Tensor.mul_[nonleaf]", "inplace", nonleaf_inplace, 0.1),
    Spec("Tensor.div_[nonleaf]", "inplace", nonleaf_inplace, 0.05),
    Spec("Tensor.relu_[nonleaf]", "inplace", nonleaf_inplace, 0.1),
    Spec("Tensor.sigmoid_[nonleaf]", "inplace", nonleaf_inplace, 0.05),
    Spec("Tensor.tanh_[nonleaf]", "inplace", nonleaf_inplace, 0.05),
    Spec(F + "huber_loss", "nn", kink_loss, 0.15),
    Spec(F + "margin_ranking_loss", "nn", kink_loss, 0.15),
    Spec(F + "hinge_embedding_loss", "nn", kink_loss, 0.15),
    Spec(F + "kl_div", "nn", kink_loss, 0.15),
)
