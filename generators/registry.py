"""The weighted list of op specs the builder draws from.

Contract: ``REGISTRY`` is an ordered tuple of specs with unique names; order and
weights are part of the generator version (changing them changes programs for
a seed, so bump ``GENERATOR_VERSION`` in ``build.py``).
"""
from __future__ import annotations

import math

from .ops import (Binary, Cast, Cat, Flatten, InplaceBinary, InplaceScalar, LayerNorm,
                  MatmulSelf, Reduce, Softmax, StepSlice, Transpose, Unary, Unsqueeze, Where,
                  is_float, is_numeric, is_signed_numeric)


def _is_bool(v):
    return v.type.is_bool


def _exp_bound(b: float) -> float:
    return math.exp(b)


UNARY = (
    Unary("torch.sin", "torch.sin({0})", bound=lambda b: min(b, 1.0)),
    Unary("torch.cos", "torch.cos({0})", bound=lambda b: 1.0),
    Unary("torch.tanh", "torch.tanh({0})", bound=lambda b: min(b, 1.0)),
    Unary("torch.sigmoid", "torch.sigmoid({0})", bound=lambda b: 1.0),
    Unary("torch.exp", "torch.exp({0})", bound=_exp_bound, max_in=4.0),
    Unary("torch.expm1", "torch.expm1({0})", bound=_exp_bound, max_in=4.0, weight=0.5),
    Unary("torch.abs", "torch.abs({0})", accepts=is_signed_numeric),
    Unary("torch.neg", "torch.neg({0})", accepts=is_signed_numeric),
    Unary("torch.relu", "torch.relu({0})", accepts=is_signed_numeric),
    Unary("torch.erf", "torch.erf({0})", bound=lambda b: 1.0),
    Unary("torch.atan", "torch.atan({0})", bound=lambda b: 1.6, weight=0.5),
    Unary("torch.log1p", "torch.log1p(torch.abs({0}))", bound=lambda b: math.log1p(b)),
    Unary("torch.sqrt", "torch.sqrt(torch.abs({0}))", bound=lambda b: math.sqrt(b)),
    Unary("torch.square", "torch.square({0})", accepts=is_numeric, bound=lambda b: b * b),
    Unary("torch.floor", "torch.floor({0})", bound=lambda b: b + 1, weight=0.5),
    Unary("torch.nn.functional.gelu", "torch.nn.functional.gelu({0})", family="nn"),
    Unary("torch.nn.functional.silu", "torch.nn.functional.silu({0})", family="nn"),
    Unary("torch.nn.functional.softplus", "torch.nn.functional.softplus({0})",
          bound=lambda b: b + 1, family="nn", weight=0.5),
    Unary("Tensor.clone", "{0}.clone()", accepts=lambda v: True, family="copy", weight=0.4),
    Unary("torch.logical_not", "torch.logical_not({0})", accepts=_is_bool, family="logical", weight=0.4),
)

BINARY = (
    Binary("torch.add", "torch.add({0}, {1})", bound=lambda a, b: a + b, weight=2.0),
    Binary("torch.sub", "torch.sub({0}, {1})", bound=lambda a, b: a + b,
           accepts=is_signed_numeric),
    Binary("torch.mul", "torch.mul({0}, {1})", bound=lambda a, b: a * b, weight=2.0),
    Binary("torch.div", "torch.div({0}, torch.abs({1}) + 1)", bound=lambda a, b: a, float_result=True),
    Binary("torch.maximum", "torch.maximum({0}, {1})", bound=max),
    Binary("torch.minimum", "torch.minimum({0}, {1})", bound=max),
    Binary("torch.gt", "torch.gt({0}, {1})", bound=lambda a, b: 1.0, out_dtype="bool",
           family="comparison"),
    Binary("torch.lt", "torch.lt({0}, {1})", bound=lambda a, b: 1.0, out_dtype="bool",
           family="comparison"),
    Binary("torch.logical_and", "torch.logical_and({0}, {1})", bound=lambda a, b: 1.0,
           accepts=_is_bool, out_dtype="bool", family="logical", weight=0.4),
)

REDUCE = (
    Reduce("torch.sum", "{0}.sum({1}, keepdim={2})", bound=lambda b, n: b * n, weight=1.5),
    Reduce("torch.mean", "{0}.mean({1}, keepdim={2})", accepts=is_float),
    Reduce("torch.amax", "{0}.amax({1}, keepdim={2})"),
    Reduce("torch.amin", "{0}.amin({1}, keepdim={2})"),
    Reduce("torch.logsumexp", "torch.logsumexp({0}, {1}, keepdim={2})", accepts=is_float,
           bound=lambda b, n: b + math.log(max(n, 1)) + 1),
    Reduce("torch.cumsum", "torch.cumsum({0}, {1})", keeps_dim=True, accepts=is_float,
           bound=lambda b, n: b * n),
    Reduce("torch.any", "{0}.any({1}, keepdim={2})", accepts=_is_bool, bound=lambda b, n: 1.0,
           weight=0.4),
)

SHAPE = (Transpose(), Unsqueeze(), Flatten(), StepSlice(), Cat())

OTHER = (
    Cast(), Where(), MatmulSelf(),
    Softmax("torch.softmax", "torch.softmax({0}, {1})"),
    Softmax("torch.log_softmax", "torch.log_softmax({0}, {1})", bounded=False),
    LayerNorm(),
)

INPLACE = (
    InplaceBinary("Tensor.add_", "add_", bound=lambda a, b: a + b, weight=1.5),
    InplaceBinary("Tensor.mul_", "mul_", bound=lambda a, b: a * b),
    InplaceBinary("Tensor.copy_", "copy_", bound=lambda a, b: max(a, b), weight=0.6),
    InplaceScalar("Tensor.mul_[slice]", "{0}[..., 1:].mul_(2)", bound=lambda b: 2 * b),
    InplaceScalar("Tensor.add_[transpose]", "{0}.transpose(-1, -2).add_(1)", min_rank=2, bound=lambda b: b + 1),
    InplaceScalar("Tensor.zero_[diagonal]", "{0}.diagonal().zero_()", min_rank=2),
    InplaceScalar("Tensor.relu_", "{0}.relu_()", float_only=True),
    InplaceScalar("Tensor.sin_", "{0}.sin_()", float_only=True, bound=lambda b: min(b, 1.0)),
)

REGISTRY = UNARY + BINARY + REDUCE + SHAPE + OTHER + INPLACE

_names = [op.name for op in REGISTRY]
assert len(_names) == len(set(_names)), "duplicate op names in REGISTRY"
