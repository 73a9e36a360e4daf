"""In-place specs: pointwise twins on inputs, intermediates and views of them, copy_/fill_/zero_,
and ``out=`` variants.

Contract: an in-place op only targets a writable value (never an expanded or
overlapping view, never bool), its other operand never shares the target's
storage, and the promoted dtype must cast back into the target's dtype. The
update is drawn through an optional view prefix (``x[..., 1:]``, ``x.t()``,
``x.diagonal()``, ``x[::2]``, ``x.select(0, -1)``, ``x.unsqueeze(0)``), so
aliasing through views is exercised; every alias of the root takes the new bound.
"""
from __future__ import annotations

import math

from . import shapes
from .ir import Ref, TensorType
from .ops import DT, Spec, bcast_to, castable_into, writable
from .scope import Scope, Val, promote_vals

# (template applied to the target, minimum rank, needs: "square" last two dims / "nonempty0")
VIEWS = (
    ("{0}", 0, None), ("{0}", 0, None),
    ("{0}[..., 1:]", 1, None), ("{0}[::2]", 1, None), ("{0}.transpose(-1, -2)", 2, None),
    ("{0}.diagonal(0, -2, -1)", 2, "square"), ("{0}.select(0, -1)", 1, "nonempty0"),
    ("{0}.unsqueeze(0)", 0, None), ("{0}.t()", 2, "rank2"),
)


def _view_prefix(s: Scope, t: Val, allow_view: bool = True) -> str:
    cands = [v for v in VIEWS if t.type.rank >= v[1] and (
        v[2] is None or (v[2] == "square" and t.type.shape[-1] == t.type.shape[-2])
        or (v[2] == "nonempty0" and s.min_dim(t.type.shape[0]) >= 1) or (v[2] == "rank2" and t.type.rank == 2))]
    if not allow_view:
        return "{0}"
    return s.ch.choice(cands)[0]


def _target(s: Scope, dtypes: str = "num") -> Val | None:
    return s.pick(lambda v: writable(v) and v.type.dtype in DT[dtypes])


def unary_(s, spec):
    t = _target(s, spec.dtypes)
    if t is None or t.bound > spec.max_in or (spec.exact_in and not t.exact):
        return False
    view = _view_prefix(s, t)
    return s.mutate(spec.name, f"{view}.{spec.method}", (Ref(t.name),), t, spec.bound(t.bound),
                    exact=t.exact and spec.keeps_exact)


def binary_(s, spec):
    """``view(t).op_(other)``: other broadcasts to the whole target (hence to any view prefix too)."""
    t = _target(s, spec.dtypes)
    if t is None:
        return False
    o = s.pick(lambda v: v.root != t.root and v.type.dtype in DT[spec.dtypes] and bcast_to(t.type.shape, v)
               and castable_into(v.type.dtype, t.type.dtype) and v.type.rank <= t.type.rank)
    if o is None:
        return False
    view = "{0}" if o.type.rank > 0 and s.ch.boolean(0.6) else _view_prefix(s, t)
    # the operand must broadcast to the view too: only rank-0 operands go through view prefixes
    if view != "{0}" and o.type.rank > 0:
        view = "{0}"
    tmpl = f"{view}.{spec.method}".replace("{1}", "{1}")
    return s.mutate(spec.name, tmpl, (Ref(t.name), Ref(o.name)), t, spec.bound(t.bound, o.bound),
                    exact=t.exact and o.exact and spec.keeps_exact)


def copy_(s, spec):
    t = _target(s, "num")
    if t is None:
        return False
    o = s.pick(lambda v: v.root != t.root and bcast_to(t.type.shape, v) and v.type.dtype in DT["numb"]
               and (t.type.is_float or not v.type.is_float or v.exact) and v.bound <= _lim(t))
    if o is None:
        return False
    if o.type.dtype == "uint8" and False:
        return False
    exact = o.exact and (not o.type.is_float or t.type.dtype == "float64" or t.type.dtype == o.type.dtype)
    return s.mutate(spec.name, "{0}.copy_({1})", (Ref(t.name), Ref(o.name)), t, max(t.bound, o.bound),
                    exact=exact if t.type.is_float else None)


def _lim(t: Val) -> float:
    from .scope import LIMIT
    return LIMIT[t.type.dtype]


def fill_(s, spec):
    t = _target(s)
    if t is None:
        return False
    view = _view_prefix(s, t)
    tmpl = view + (".zero_()" if spec.name == "Tensor.zero_" else ".fill_(%s)" % ("1.25" if t.type.is_float else "2"))
    return s.mutate(spec.name, tmpl, (Ref(t.name),), t, max(t.bound, 2), exact=t.exact)


def out_variant(s, spec):
    """``torch.op(a[, b], out=t)``: t is an existing writable value of exactly the result shape."""
    if spec.arity == 1:
        x = s.pick(lambda v: v.type.dtype in DT[spec.dtypes] and v.bound <= spec.max_in)
        if x is None:
            return False
        shape, dtype, args, bound = x.type.shape, x.type.dtype, [x], spec.bound(x.bound)
    else:
        a = s.pick(lambda v: v.type.dtype in DT[spec.dtypes])
        if a is None:
            return False
        b = s.pick(lambda v: v.type.dtype in DT[spec.dtypes] and shapes.broadcast(a.type.shape, v.type.shape))
        if b is None:
            return False
        shape = shapes.broadcast(a.type.shape, b.type.shape)
        dtype, args, bound = promote_vals(a, b), [a, b], spec.bound(a.bound, b.bound)
    t = s.pick(lambda v: writable(v) and v.type.shape == tuple(shape) and all(v.root != x.root for x in args)
               and v.type.dtype == dtype)
    if t is None:
        return False
    refs = [Ref(t.name)] + [Ref(v.name) for v in args]
    # unary out= needs the exact dtype: cast relative to the target, so the fp64 run agrees too
    ops = "{1}.to({0}.dtype)" if len(args) == 1 else ", ".join("{%d}" % (i + 1) for i in range(len(args)))
    tmpl = f"torch.{spec.func}({ops}, out={{0}})"
    return s.mutate(spec.name, tmpl, tuple(refs), t, bound, exact=False)


add_b = lambda a, b: a + b
mul_b = lambda a, b: a * b
INPLACE = (
    Spec("Tensor.add_", "inplace", binary_, 1.5, dtypes="num", method="add_({1})", bound=add_b, keeps_exact=False),
    Spec("Tensor.sub_", "inplace", binary_, 0.6, dtypes="signed", method="sub_({1})", bound=add_b,
         keeps_exact=False),
    Spec("Tensor.mul_", "inplace", binary_, 1.0, dtypes="num", method="mul_({1})", bound=mul_b, keeps_exact=False),
    Spec("Tensor.div_", "inplace", binary_, 0.5, dtypes="float", method="div_(torch.abs({1}) + 1)",
         bound=lambda a, b: a, keeps_exact=False),
    Spec("Tensor.clamp_[min_tensor]", "inplace", binary_, 0.3, dtypes="num", method="clamp_(min={1})",
         bound=max, keeps_exact=True),
    Spec("Tensor.addcmul_", "inplace", binary_, 0.2, dtypes="float", method="addcmul_({1}, {1}, value=0.25)",
         bound=lambda a, b: a + 0.25 * b * b, keeps_exact=False),
    Spec("Tensor.lerp_", "inplace", binary_, 0.2, dtypes="float", method="lerp_({1}.to({0}.dtype), 0.25)",
         bound=lambda a, b: a + b, keeps_exact=False),
    Spec("Tensor.copy_", "inplace", copy_, 0.8),
    Spec("Tensor.fill_", "inplace", fill_, 0.3),
    Spec("Tensor.zero_", "inplace", fill_, 0.4),
    Spec("Tensor.mul_[scalar]", "inplace", unary_, 0.8, dtypes="num", method="mul_(2)", bound=lambda b: 2 * b,
         max_in=math.inf, exact_in=False, keeps_exact=True),
    Spec("Tensor.add_[scalar]", "inplace", unary_, 0.8, dtypes="num", method="add_(1)", bound=lambda b: b + 1,
         max_in=math.inf, exact_in=False, keeps_exact=False),
    Spec("Tensor.neg_", "inplace", unary_, 0.3, dtypes="signed", method="neg_()", bound=lambda b: b,
         max_in=math.inf, exact_in=False, keeps_exact=True),
    Spec("Tensor.abs_", "inplace", unary_, 0.3, dtypes="signed", method="abs_()", bound=lambda b: b,
         max_in=math.inf, exact_in=False, keeps_exact=True),
    Spec("Tensor.relu_", "inplace", unary_, 0.5, dtypes="signed", method="relu_()", bound=lambda b: b,
         max_in=math.inf, exact_in=False, keeps_exact=True),
    Spec("Tensor.clamp_", "inplace", unary_, 0.4, dtypes="num", method="clamp_(-3, 3)", bound=lambda b: min(b, 3),
         max_in=math.inf, exact_in=False, keeps_exact=True),
    Spec("Tensor.sin_", "inplace", unary_, 0.4, dtypes="float", method="sin_()", bound=lambda b: min(b, 1.0),
         max_in=math.inf, exact_in=False, keeps_exact=False),
    Spec("Tensor.cos_", "inplace", unary_, 0.2, dtypes="float", method="cos_()", bound=lambda b: 1.0,
         max_in=math.inf, exact_in=False, keeps_exact=False),
    Spec("Tensor.tanh_", "inplace", unary_, 0.3, dtypes="float", method="tanh_()", bound=lambda b: min(b, 1.0),
         max_in=math.inf, exact_in=False, keeps_exact=False),
    Spec("Tensor.sigmoid_", "inplace", unary_, 0.3, dtypes="float", method="sigmoid_()", bound=lambda b: 1.0,
         max_in=math.inf, exact_in=False, keeps_exact=False),
    Spec("Tensor.exp_", "inplace", unary_, 0.2, dtypes="float", method="exp_()", bound=lambda b: math.exp(b),
         max_in=3.0, exact_in=False, keeps_exact=False),
    Spec("Tensor.sqrt_", "inplace", unary_, 0.2, dtypes="float", method="abs_().add_(0.25).sqrt_()",
         # shifted off sqrt's singular derivative at 0 (see torch.sqrt in ops_pointwise)
         bound=lambda b: math.sqrt(b + 0.25), max_in=math.inf, exact_in=False, keeps_exact=False),
    Spec("Tensor.square_", "inplace", unary_, 0.2, dtypes="num", method="square_()", bound=lambda b: b * b,
         max_in=math.inf, exact_in=False, keeps_exact=False),
    Spec("Tensor.floor_", "inplace", unary_, 0.2, dtypes="float", method="floor_()", bound=lambda b: b + 1,
         max_in=math.inf, exact_in=True, keeps_exact=True),
    Spec("Tensor.clamp_min_", "inplace", unary_, 0.2, dtypes="float", method="clamp_min_(0.5)",
         bound=lambda b: max(b, 0.5), max_in=math.inf, exact_in=False, keeps_exact=True),
    Spec("Tensor.pow_", "inplace", unary_, 0.2, dtypes="num", method="pow_(2)", bound=lambda b: b * b,
         max_in=math.inf, exact_in=False, keeps_exact=False),
    Spec("Tensor.remainder_", "inplace", unary_, 0.2, dtypes="int", method="remainder_(5)", bound=lambda b: 5,
         max_in=math.inf, exact_in=False, keeps_exact=True),
    Spec("torch.add[out]", "out", out_variant, 0.3, arity=2, func="add", dtypes="num", bound=add_b),
    Spec("torch.mul[out]", "out", out_variant, 0.3, arity=2, func="mul", dtypes="num", bound=mul_b),
    Spec("torch.sin[out]", "out", out_variant, 0.2, arity=1, func="sin", dtypes="float", bound=lambda b: 1.0,
         max_in=math.inf),
    Spec("torch.exp[out]", "out", out_variant, 0.2, arity=1, func="exp", dtypes="float", bound=lambda b: math.exp(b),
         max_in=3.0),
    Spec("torch.neg[out]", "out", out_variant, 0.2, arity=1, func="neg", dtypes="signed", bound=lambda b: b,
         max_in=math.inf),
    Spec("torch.maximum[out]", "out", out_variant, 0.2, arity=2, func="maximum", dtypes="num", bound=max),
)
_ = TensorType
