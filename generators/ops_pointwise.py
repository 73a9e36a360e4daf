"""Pointwise specs: unary, binary (broadcasting + promotion), comparisons, ternary ops.

Contract: tables of ``Unary``/``Binary``/``Spec`` objects. Restricted domains
use composite templates that keep the argument inside the domain (``log`` of
``abs(x) + 1``, ``asin`` of ``tanh(x) * 0.9``); discontinuous ops take exact
inputs only (see ``ops``).
"""
from __future__ import annotations

import math

from . import shapes
from .ir import Lit, Ref, TensorType
from .ops import DT, Binary, Spec, Unary, exact_of, float_out
from .scope import Scope, promote_vals

F = "torch.nn.functional."
one = lambda b: 1.0
same = lambda b: b
plus1 = lambda b: b + 1
exp_b = lambda b: math.exp(min(b, 50))

UNARY = (
    Unary("torch.sin", "torch.sin({0})", dtypes="tofloat", bound=lambda b: min(b, 1.0)),
    Unary("torch.cos", "torch.cos({0})", dtypes="tofloat", bound=one),
    Unary("torch.tan", "torch.tan({0})", bound=lambda b: 20.0, max_in=1.2, weight=0.4),
    Unary("torch.tanh", "torch.tanh({0})", dtypes="tofloat", bound=lambda b: min(b, 1.0)),
    Unary("torch.sigmoid", "torch.sigmoid({0})", dtypes="tofloat", bound=one),
    Unary("torch.exp", "torch.exp({0})", bound=exp_b, max_in=4.0),
    Unary("torch.exp2", "torch.exp2({0})", bound=lambda b: 2 ** min(b, 50), max_in=5.0, weight=0.4),
    Unary("torch.expm1", "torch.expm1({0})", bound=exp_b, max_in=4.0, weight=0.5),
    Unary("torch.log", "torch.log(torch.abs({0}) + 1)", dtypes="tofloat", bound=lambda b: math.log1p(b)),
    Unary("torch.log2", "torch.log2(torch.abs({0}) + 1)", bound=lambda b: math.log1p(b) * 1.5, weight=0.4),
    Unary("torch.log10", "torch.log10(torch.abs({0}) + 1)", bound=lambda b: math.log1p(b), weight=0.4),
    Unary("torch.log1p", "torch.log1p(torch.abs({0}))", bound=lambda b: math.log1p(b)),
    # + 0.25: sqrt's derivative is infinite at 0, and exact zeros are common (relu, softshrink,
    # clamp); eager and compiled backward then differ only in how inf * 0 lands (0 or NaN), a
    # gradient at a non-differentiable point that PyTorch rejects as a report
    Unary("torch.sqrt", "torch.sqrt(torch.abs({0}) + 0.25)", dtypes="tofloat", bound=lambda b: math.sqrt(b + 0.25)),
    Unary("torch.rsqrt", "torch.rsqrt(torch.abs({0}) + 1)", bound=one, weight=0.5),
    Unary("torch.reciprocal", "torch.reciprocal(torch.abs({0}) + 0.5)", bound=lambda b: 2.0, weight=0.5),
    Unary("torch.abs", "torch.abs({0})", dtypes="signed", keeps_exact=True),
    Unary("torch.neg", "torch.neg({0})", dtypes="signed", keeps_exact=True),
    Unary("Tensor.__neg__", "-{0}", dtypes="signed", keeps_exact=True, weight=0.3),
    Unary("torch.positive", "torch.positive({0})", dtypes="num", keeps_exact=True, weight=0.2),
    Unary("torch.relu", "torch.relu({0})", dtypes="signed", keeps_exact=True),
    Unary("torch.erf", "torch.erf({0})", bound=one),
    Unary("torch.erfc", "torch.erfc({0})", bound=lambda b: 2.0, weight=0.4),
    Unary("torch.erfinv", "torch.erfinv(torch.tanh({0}) * 0.9)", dtypes="f32up", bound=lambda b: 1.2,
          weight=0.3),
    Unary("torch.atan", "torch.atan({0})", bound=lambda b: 1.6, weight=0.5),
    Unary("torch.asin", "torch.asin(torch.tanh({0}) * 0.9)", bound=lambda b: 1.2, weight=0.4),
    Unary("torch.acos", "torch.acos(torch.tanh({0}) * 0.9)", bound=lambda b: 2.7, weight=0.4),
    Unary("torch.sinh", "torch.sinh({0})", bound=exp_b, max_in=4.0, weight=0.4),
    Unary("torch.cosh", "torch.cosh({0})", bound=exp_b, max_in=4.0, weight=0.4),
    Unary("torch.asinh", "torch.asinh({0})", bound=lambda b: math.asinh(b) + 0.1, weight=0.4),
    Unary("torch.acosh", "torch.acosh(torch.abs({0}) + 1.5)", bound=lambda b: math.log(2 * b + 3) + 1, weight=0.3),
    Unary("torch.atanh", "torch.atanh(torch.tanh({0}) * 0.9)", bound=lambda b: 1.5, weight=0.3),
    Unary("torch.square", "torch.square({0})", dtypes="num", bound=lambda b: b * b),
    Unary("torch.lgamma", "torch.lgamma(torch.abs({0}) + 1)", dtypes="f32up", bound=lambda b: b * b + 2, weight=0.3),
    Unary("torch.digamma", "torch.digamma(torch.abs({0}) + 1)", dtypes="f32up", bound=lambda b: b + 2, weight=0.3),
    Unary("torch.sinc", "torch.sinc({0})", dtypes="f32up", bound=one, weight=0.3),
    Unary("torch.deg2rad", "torch.deg2rad({0})", bound=lambda b: b / 50 + 0.1, weight=0.3),
    Unary("torch.rad2deg", "torch.rad2deg({0})", bound=lambda b: b * 58, weight=0.3),
    Unary("torch.logit", "torch.logit(torch.sigmoid({0}) * 0.8 + 0.1)", bound=lambda b: 2.5, weight=0.3),
    Unary("torch.nan_to_num", "torch.nan_to_num({0})", keeps_exact=True, weight=0.2),
    Unary("torch.clamp", "torch.clamp({0}, -1.5, 1.5)", bound=lambda b: min(b, 1.5)),
    Unary("torch.clamp_min", "torch.clamp_min({0}, 0.25)", bound=lambda b: max(b, 0.25), weight=0.4),
    Unary("torch.clamp_max", "torch.clamp_max({0}, 3)", dtypes="num", bound=same, weight=0.4),
    Unary("Tensor.pow", "{0}.pow(2)", dtypes="num", bound=lambda b: b * b, weight=0.5),
    Unary("torch.pow", "torch.pow({0}, 3)", dtypes="num", bound=lambda b: b ** 3, weight=0.4),
    Unary("torch.float_power", "torch.float_power({0}, 2)", dtypes="num", bound=lambda b: b * b,
          out_dtype="float64", weight=0.3),
    Unary("Tensor.__mul__", "{0} * 2", dtypes="num", bound=lambda b: 2 * b, keeps_exact=True, weight=0.4),
    Unary("Tensor.__truediv__", "{0} / 3", dtypes="tofloat", bound=lambda b: b / 3 + 1e-3, weight=0.4),
    # discontinuous: exact inputs only
    Unary("torch.floor", "torch.floor({0})", bound=plus1, exact_in=True, keeps_exact=True, weight=0.5),
    Unary("torch.ceil", "torch.ceil({0})", bound=plus1, exact_in=True, keeps_exact=True, weight=0.4),
    Unary("torch.trunc", "torch.trunc({0})", bound=same, exact_in=True, keeps_exact=True, weight=0.4),
    Unary("torch.round", "torch.round({0})", bound=plus1, exact_in=True, keeps_exact=True, weight=0.4),
    Unary("torch.frac", "torch.frac({0})", bound=one, exact_in=True, keeps_exact=True, weight=0.3),
    Unary("torch.sign", "torch.sign({0})", dtypes="num", bound=one, exact_in=True, keeps_exact=True, weight=0.4),
    Unary("torch.signbit", "torch.signbit({0})", dtypes="num", bound=one, exact_in=True, out_dtype="bool",
          weight=0.3),
    Unary("torch.isfinite", "torch.isfinite({0})", dtypes="num", bound=one, out_dtype="bool", weight=0.2),
    Unary("torch.isnan", "torch.isnan({0})", dtypes="num", bound=one, out_dtype="bool", weight=0.2),
    Unary("torch.logical_not", "torch.logical_not({0})", dtypes="intb", out_dtype="bool", bound=one,
          family="logical", weight=0.4),
    Unary("torch.bitwise_not", "torch.bitwise_not({0})", dtypes="bool", bound=one, family="logical", weight=0.3),
    Unary("Tensor.__invert__", "~{0}", dtypes="bool", bound=one, family="logical", weight=0.2),
    # activations
    Unary(F + "gelu", F + "gelu({0})", family="nn"),
    Unary(F + "gelu[tanh]", F + "gelu({0}, approximate='tanh')", family="nn", weight=0.3),
    Unary(F + "silu", F + "silu({0})", family="nn"),
    Unary(F + "mish", F + "mish({0})", family="nn", weight=0.4),
    Unary(F + "softplus", F + "softplus({0})", bound=plus1, family="nn", weight=0.5),
    Unary(F + "elu", F + "elu({0})", bound=plus1, family="nn", weight=0.4),
    Unary(F + "selu", F + "selu({0})", bound=lambda b: 1.76 * b + 2, family="nn", weight=0.3),
    Unary(F + "celu", F + "celu({0}, alpha=0.5)", bound=plus1, family="nn", weight=0.3),
    Unary(F + "leaky_relu", F + "leaky_relu({0}, 0.1)", family="nn", weight=0.5),
    Unary(F + "relu6", F + "relu6({0})", bound=lambda b: min(b, 6), family="nn", weight=0.3),
    Unary(F + "hardtanh", F + "hardtanh({0})", bound=lambda b: min(b, 1.0), family="nn", weight=0.4),
    Unary(F + "hardsigmoid", F + "hardsigmoid({0})", bound=one, family="nn", weight=0.3),
    Unary(F + "hardswish", F + "hardswish({0})", bound=plus1, family="nn", weight=0.3),
    Unary(F + "softsign", F + "softsign({0})", bound=one, family="nn", weight=0.3),
    Unary(F + "tanhshrink", F + "tanhshrink({0})", bound=plus1, family="nn", weight=0.3),
    Unary(F + "softshrink", F + "softshrink({0}, 0.5)", family="nn", weight=0.3),
    Unary(F + "logsigmoid", F + "logsigmoid({0})", bound=plus1, family="nn", weight=0.3),
    Unary(F + "relu", F + "relu({0})", keeps_exact=True, family="nn", weight=0.4),
    Unary(F + "hardshrink", F + "hardshrink({0}, 0.5)", exact_in=True, keeps_exact=True, family="nn", weight=0.2),
    Unary(F + "threshold", F + "threshold({0}, 0.25, -1.0)", exact_in=True, keeps_exact=True,
          bound=plus1, family="nn", weight=0.2),
    Unary("Tensor.clone", "{0}.clone()", dtypes="any", keeps_exact=True, family="copy", weight=0.4),
    Unary("torch.clone", "torch.clone({0})", dtypes="any", keeps_exact=True, family="copy", weight=0.2),
    Unary("Tensor.detach", "{0}.detach().clone()", dtypes="any", keeps_exact=True, family="copy", weight=0.2),
)

add_b = lambda a, b: a + b
mul_b = lambda a, b: a * b
one2 = lambda a, b: 1.0

BINARY = (
    Binary("torch.add", "torch.add({0}, {1})", bound=add_b, dtypes="numb", weight=2.0),
    Binary("Tensor.__add__", "{0} + {1}", bound=add_b, weight=0.6),
    Binary("torch.add[alpha]", "torch.add({0}, {1}, alpha=2)", bound=lambda a, b: a + 2 * b, weight=0.3),
    Binary("torch.sub", "torch.sub({0}, {1})", bound=add_b, dtypes="signed", no_uint8=True),
    Binary("Tensor.__sub__", "{0} - {1}", bound=add_b, dtypes="signed", no_uint8=True, weight=0.4),
    Binary("torch.rsub", "torch.rsub({0}, {1})", bound=add_b, dtypes="signed", no_uint8=True, weight=0.3),
    Binary("torch.mul", "torch.mul({0}, {1})", bound=mul_b, dtypes="numb", weight=2.0),
    Binary("Tensor.__mul__[tensor]", "{0} * {1}", bound=mul_b, weight=0.5),
    Binary("torch.div", "torch.div({0}, torch.abs({1}) + 1)", bound=lambda a, b: a, float_result=True),
    Binary("torch.true_divide", "torch.true_divide({0}, torch.abs({1}) + 0.5)", bound=lambda a, b: 2 * a,
           float_result=True, weight=0.4),
    Binary("Tensor.__truediv__[tensor]", "{0} / (torch.abs({1}) + 1)", bound=lambda a, b: a,
           float_result=True, weight=0.3),
    Binary("torch.div[floor]", "torch.div({0}, torch.abs({1}) + 1, rounding_mode='floor')",
           bound=lambda a, b: a + 1, dtypes="int", weight=0.5),
    Binary("torch.div[trunc]", "torch.div({0}, torch.abs({1}) + 1, rounding_mode='trunc')",
           bound=lambda a, b: a, dtypes="int", weight=0.3),
    Binary("torch.floor_divide", "torch.floor_divide({0}, torch.abs({1}) + 1)", bound=lambda a, b: a + 1,
           dtypes="int", weight=0.4),
    Binary("torch.remainder", "torch.remainder({0}, torch.abs({1}) + 1)", bound=lambda a, b: b + 1,
           dtypes="int", weight=0.5),
    Binary("torch.fmod", "torch.fmod({0}, torch.abs({1}) + 1)", bound=lambda a, b: b + 1, dtypes="int",
           weight=0.4),
    Binary("torch.maximum", "torch.maximum({0}, {1})", bound=max, keeps_exact=True),
    Binary("torch.minimum", "torch.minimum({0}, {1})", bound=max, keeps_exact=True),
    Binary("torch.fmax", "torch.fmax({0}, {1})", bound=max, keeps_exact=True, weight=0.3),
    Binary("torch.fmin", "torch.fmin({0}, {1})", bound=max, keeps_exact=True, weight=0.3),
    Binary("torch.atan2", "torch.atan2({0}, {1})", bound=lambda a, b: 3.2, dtypes="float", exact_in=True,
           weight=0.3),
    Binary("torch.hypot", "torch.hypot({0}, {1})", bound=add_b, dtypes="float", same_dtype=False, weight=0.3),
    Binary("torch.copysign", "torch.copysign({0}, {1})", bound=lambda a, b: a, dtypes="float", exact_in=True,
           keeps_exact=True, weight=0.3),
    Binary("torch.logaddexp", "torch.logaddexp({0}, {1})", bound=lambda a, b: max(a, b) + 1, dtypes="float",
           weight=0.3),
    Binary("torch.logaddexp2", "torch.logaddexp2({0}, {1})", bound=lambda a, b: max(a, b) + 1,
           dtypes="float", weight=0.2),
    Binary("torch.xlogy", "torch.xlogy({0}, torch.abs({1}) + 1)", bound=lambda a, b: a * (math.log1p(b) + 1),
           dtypes="float", weight=0.3),
    Binary("torch.bitwise_and", "torch.bitwise_and({0}, {1})", bound=max, dtypes="intb", family="logical",
           weight=0.4),
    Binary("torch.bitwise_or", "torch.bitwise_or({0}, {1})", bound=lambda a, b: 2 * max(a, b),
           dtypes="intb", family="logical", weight=0.4),
    Binary("torch.bitwise_xor", "torch.bitwise_xor({0}, {1})", bound=lambda a, b: 2 * max(a, b),
           dtypes="intb", family="logical", weight=0.4),
    Binary("Tensor.__and__", "{0} & {1}", bound=one2, dtypes="bool", family="logical", weight=0.2),
    Binary("Tensor.__or__", "{0} | {1}", bound=one2, dtypes="bool", family="logical", weight=0.2),
    Binary("torch.logical_and", "torch.logical_and({0}, {1})", bound=one2, dtypes="intb", out_dtype="bool",
           family="logical", weight=0.4),
    Binary("torch.logical_or", "torch.logical_or({0}, {1})", bound=one2, dtypes="intb", out_dtype="bool",
           family="logical", weight=0.3),
    Binary("torch.logical_xor", "torch.logical_xor({0}, {1})", bound=one2, dtypes="intb", out_dtype="bool",
           family="logical", weight=0.3),
)

COMPARE = tuple(
    Binary(f"torch.{op}", f"torch.{op}({{0}}, {{1}})", bound=one2, dtypes="numb", out_dtype="bool",
           exact_in=True, family="comparison", weight=w)
    for op, w in (("gt", 1.0), ("lt", 1.0), ("ge", 0.5), ("le", 0.5), ("eq", 0.5), ("ne", 0.5))
) + (
    Binary("Tensor.__gt__", "{0} > {1}", bound=one2, dtypes="num", out_dtype="bool", exact_in=True,
           family="comparison", weight=0.3),
    Binary("torch.isclose", "torch.isclose({0}, {1}.to({0}.dtype))", bound=one2, dtypes="float",
           out_dtype="bool", exact_in=True, same_dtype=True, family="comparison", weight=0.2),
)

# ---- ternary ops ---------------------------------------------------------------
def _where(s: Scope, spec: Spec) -> bool:
    c = s.pick(lambda v: v.type.is_bool)
    if c is None:
        return False
    a = s.pick(lambda v: v.type.dtype in DT["num"] and shapes.broadcast(c.type.shape, v.type.shape) is not None)
    if a is None:
        return False
    shape = shapes.broadcast(c.type.shape, a.type.shape)
    if spec.scalar:
        return s.assign(spec.name, "torch.where({0}, {1}, 0)", (Ref(c.name), Ref(a.name)),
                        TensorType(shape, a.type.dtype), a.bound, exact=exact_of(a.type.dtype, True, a)) is not None
    b = s.pick(lambda v: v.type.dtype in DT["num"] and shapes.broadcast(shape, v.type.shape) is not None)
    if b is None:
        return False
    shape = shapes.broadcast(shape, b.type.shape)
    dtype = promote_vals(a, b)
    return s.assign(spec.name, "torch.where({0}, {1}, {2})", (Ref(c.name), Ref(a.name), Ref(b.name)),
                    TensorType(shape, dtype), max(a.bound, b.bound),
                    exact=exact_of(dtype, True, a, b)) is not None


def _tern(s: Scope, spec: Spec) -> bool:
    """addcmul / addcdiv / lerp: three float operands broadcast to the first's shape."""
    a = s.pick(lambda v: v.type.is_float)
    if a is None:
        return False
    ok = lambda v: v.type.dtype in DT[spec.dtypes] and shapes.broadcast(a.type.shape, v.type.shape) == a.type.shape
    b = s.pick(ok)
    c = s.pick(ok)
    if b is None or c is None:
        return False
    return s.assign(spec.name, spec.template, (Ref(a.name), Ref(b.name), Ref(c.name)), a.type,
                    spec.bound(a.bound, b.bound, c.bound), contig=a.contig) is not None


TERNARY = (
    Spec("torch.where", "comparison", _where, scalar=False),
    Spec("torch.where[scalar]", "comparison", _where, 0.4, scalar=True),
    Spec("torch.addcmul", "pointwise", _tern, 0.4, dtypes="float",
         template="torch.addcmul({0}, {1}.to({0}.dtype), {2}.to({0}.dtype), value=0.5)",
         bound=lambda a, b, c: a + 0.5 * b * c),
    Spec("torch.addcdiv", "pointwise", _tern, 0.3, dtypes="float",
         template="torch.addcdiv({0}, {1}.to({0}.dtype), torch.abs({2}.to({0}.dtype)) + 1, value=0.5)",
         bound=lambda a, b, c: a + 0.5 * b),
    Spec("torch.lerp", "pointwise", _tern, 0.3, dtypes="float",
         template="torch.lerp({0}, {1}.to({0}.dtype), torch.sigmoid({2}.to({0}.dtype)))",
         bound=lambda a, b, c: a + 2 * (a + b)),
    Spec("torch.clamp[tensor]", "pointwise", _tern, 0.3, dtypes="float",
         template="torch.clamp({0}, min=-torch.abs({1}.to({0}.dtype)), max=torch.abs({2}.to({0}.dtype)))",
         bound=lambda a, b, c: a),
)

