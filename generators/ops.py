"""The op registry: one small declarative spec per op family.

Contract: every spec has a unique ``name`` (the torch function or method it
exercises), a ``family``, a ``weight``, and ``build(scope) -> bool`` which
either appends one well-typed statement to the scope (drawing every decision
from the scope's choice stream) or returns False and leaves the scope as it
was. Specs encode the shape rule, the dtype rule and the value-range rule of
their op; nothing here runs torch ops.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from . import shapes
from .ir import FLOAT_DTYPES, INT_DTYPES, Lit, Ref, TensorType
from .scope import LIMIT, Scope, Val, can_cast, promote

NUMERIC = FLOAT_DTYPES + INT_DTYPES


def is_float(v: Val) -> bool:
    return v.type.is_float


def is_numeric(v: Val) -> bool:
    return v.type.dtype in NUMERIC


def is_signed_numeric(v: Val) -> bool:
    return v.type.dtype in NUMERIC and v.type.dtype != "uint8"


@dataclass(frozen=True)
class Unary:
    """``out = template(x)``, same shape; dtype kept (or ``out_dtype``)."""
    name: str
    template: str
    accepts: Callable[[Val], bool] = is_float
    bound: Callable[[float], float] = lambda b: b
    max_in: float = math.inf          # only drawn when |x| <= max_in
    out_dtype: str | None = None
    family: str = "pointwise"
    weight: float = 1.0

    def build(self, s: Scope) -> bool:
        x = s.pick(lambda v: self.accepts(v) and v.bound <= self.max_in)
        if x is None:
            return False
        t = TensorType(x.type.shape, self.out_dtype or x.type.dtype)
        return s.assign(self.name, self.template, (Ref(x.name),), t, self.bound(x.bound)) is not None


@dataclass(frozen=True)
class Binary:
    """``out = template(a, b)`` with broadcasting and type promotion."""
    name: str
    template: str
    bound: Callable[[float, float], float]
    accepts: Callable[[Val], bool] = is_numeric
    out_dtype: str | None = None      # fixed result dtype (comparisons -> bool)
    float_result: bool = False        # true division: ints promote to float32
    family: str = "pointwise"
    weight: float = 1.0

    def build(self, s: Scope) -> bool:
        a = s.pick(self.accepts)
        if a is None:
            return False
        ok = lambda v: self.accepts(v) and shapes.broadcast(a.type.shape, v.type.shape) is not None
        b = s.pick(lambda v: ok(v) and v is not a) or (a if ok(a) else None)
        if b is None:
            return False
        shape = shapes.broadcast(a.type.shape, b.type.shape)
        dtype = self.out_dtype or promote(a.type.dtype, b.type.dtype)
        if self.float_result and dtype not in FLOAT_DTYPES:
            dtype = "float32"
        return s.assign(self.name, self.template, (Ref(a.name), Ref(b.name)),
                        TensorType(shape, dtype), self.bound(a.bound, b.bound)) is not None


@dataclass(frozen=True)
class Reduce:
    """``out = x.<op>(dim, keepdim)`` over one dim."""
    name: str
    template: str                      # "{0}.sum({1}, keepdim={2})"
    accepts: Callable[[Val], bool] = is_numeric
    bound: Callable[[float, int], float] = lambda b, n: b
    max_in: float = math.inf
    out_dtype: Callable[[str], str] = lambda d: d
    keeps_dim: bool | None = None      # None: draw keepdim; True: shape kept (cumsum)
    family: str = "reduction"
    weight: float = 1.0

    def build(self, s: Scope) -> bool:
        x = s.pick(lambda v: self.accepts(v) and v.type.rank >= 1 and v.bound <= self.max_in)
        if x is None:
            return False
        d = s.ch.integer(0, x.type.rank - 1)
        n = _max_size(s, x.type.shape[d])
        if self.keeps_dim:
            shape, args = x.type.shape, (Ref(x.name), Lit(d))
        else:
            keep = s.ch.boolean()
            shape = tuple(1 if i == d else e for i, e in enumerate(x.type.shape)) if keep else \
                x.type.shape[:d] + x.type.shape[d + 1:]
            args = (Ref(x.name), Lit(d), Lit(keep))
        t = TensorType(shape, self.out_dtype(x.type.dtype))
        return s.assign(self.name, self.template, args, t, self.bound(x.bound, n)) is not None


def _max_size(s: Scope, dim) -> int:
    calls = len(next(iter(s.sizes.values()), [1]))
    return max(shapes.dim_value(dim, {k: v[i] for k, v in s.sizes.items()}) for i in range(calls))


@dataclass(frozen=True)
class Cast:
    name: str = "Tensor.to"
    family: str = "cast"
    weight: float = 1.0

    def build(self, s: Scope) -> bool:
        x = s.pick(lambda v: True)
        if x is None:
            return False
        dst = s.ch.choice(FLOAT_DTYPES + INT_DTYPES + ("bool",))
        if dst == x.type.dtype:
            return False
        # float -> int truncates: keep the value inside the target's range.
        if x.bound > LIMIT[dst] and dst != "bool":
            return False
        if x.type.is_float and dst == "uint8":
            return False  # negative floats to uint8 are undefined behaviour in C
        bound = 1.0 if dst == "bool" else x.bound
        return s.assign(self.name, "{0}.to(torch.%s)" % dst, (Ref(x.name),),
                        TensorType(x.type.shape, dst), bound) is not None


@dataclass(frozen=True)
class Where:
    name: str = "torch.where"
    family: str = "comparison"
    weight: float = 1.0

    def build(self, s: Scope) -> bool:
        c = s.pick(lambda v: v.type.is_bool)
        if c is None:
            return False
        a = s.pick(lambda v: is_numeric(v) and shapes.broadcast(c.type.shape, v.type.shape) is not None)
        if a is None:
            return False
        shape = shapes.broadcast(c.type.shape, a.type.shape)
        b = s.pick(lambda v: v.type.dtype == a.type.dtype and shapes.broadcast(shape, v.type.shape) is not None)
        if b is None:
            return False
        shape = shapes.broadcast(shape, b.type.shape)
        return s.assign(self.name, "torch.where({0}, {1}, {2})", (Ref(c.name), Ref(a.name), Ref(b.name)),
                        TensorType(shape, a.type.dtype), max(a.bound, b.bound)) is not None


@dataclass(frozen=True)
class Transpose:
    name: str = "Tensor.transpose"
    family: str = "view"
    weight: float = 1.0

    def build(self, s: Scope) -> bool:
        x = s.pick(lambda v: v.type.rank >= 2)
        if x is None:
            return False
        d0 = s.ch.integer(0, x.type.rank - 1)
        d1 = s.ch.integer(0, x.type.rank - 1)
        if d0 == d1:
            return False
        shape = list(x.type.shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return s.assign(self.name, "{0}.transpose({1}, {2})", (Ref(x.name), Lit(d0), Lit(d1)),
                        TensorType(tuple(shape), x.type.dtype), x.bound, view_of=x) is not None


@dataclass(frozen=True)
class Unsqueeze:
    name: str = "Tensor.unsqueeze"
    family: str = "view"
    weight: float = 0.7

    def build(self, s: Scope) -> bool:
        x = s.pick(lambda v: v.type.rank <= 4)
        if x is None:
            return False
        d = s.ch.integer(0, x.type.rank)
        shape = x.type.shape[:d] + (1,) + x.type.shape[d:]
        return s.assign(self.name, "{0}.unsqueeze({1})", (Ref(x.name), Lit(d)),
                        TensorType(shape, x.type.dtype), x.bound, view_of=x) is not None


@dataclass(frozen=True)
class Flatten:
    name: str = "Tensor.flatten"
    family: str = "view"
    weight: float = 0.7

    def build(self, s: Scope) -> bool:
        x = s.pick(lambda v: v.type.rank >= 2)
        if x is None:
            return False
        a = s.ch.integer(0, x.type.rank - 2)
        b = s.ch.integer(a + 1, x.type.rank - 1)
        shape = x.type.shape[:a] + (shapes.numel(x.type.shape[a:b + 1]),) + x.type.shape[b + 1:]
        # flatten of a non-contiguous tensor copies: not a view, so not writable-through.
        return s.assign(self.name, "{0}.flatten({1}, {2})", (Ref(x.name), Lit(a), Lit(b)),
                        TensorType(shape, x.type.dtype), x.bound) is not None


@dataclass(frozen=True)
class StepSlice:
    """``x[..., ::2]`` along one dim: a strided view."""
    name: str = "Tensor.__getitem__"
    family: str = "view"
    weight: float = 0.8

    def build(self, s: Scope) -> bool:
        x = s.pick(lambda v: v.type.rank >= 1)
        if x is None:
            return False
        d = s.ch.integer(0, x.type.rank - 1)
        step = s.ch.choice((2, 3))
        index = ":, " * d + f"::{step}"
        shape = x.type.shape[:d] + (shapes.ceil_div(x.type.shape[d], step),) + x.type.shape[d + 1:]
        return s.assign(self.name, "{0}[%s]" % index, (Ref(x.name),),
                        TensorType(shape, x.type.dtype), x.bound, view_of=x) is not None


@dataclass(frozen=True)
class Cat:
    name: str = "torch.cat"
    family: str = "shape"
    weight: float = 0.6

    def build(self, s: Scope) -> bool:
        a = s.pick(lambda v: v.type.rank >= 1)
        if a is None:
            return False
        b = s.pick(lambda v: v.type == a.type)
        d = s.ch.integer(0, a.type.rank - 1)
        shape = a.type.shape[:d] + (shapes.add(a.type.shape[d], b.type.shape[d]),) + a.type.shape[d + 1:]
        return s.assign(self.name, "torch.cat([{0}, {1}], {2})", (Ref(a.name), Ref(b.name), Lit(d)),
                        TensorType(shape, a.type.dtype), max(a.bound, b.bound)) is not None


@dataclass(frozen=True)
class MatmulSelf:
    """``x @ x^T`` (rank >= 2): always well-shaped, exercises GEMM lowering."""
    name: str = "torch.matmul"
    family: str = "matmul"
    weight: float = 0.8

    def build(self, s: Scope) -> bool:
        x = s.pick(lambda v: v.type.is_float and v.type.rank >= 2 and v.type.dtype != "float16")
        if x is None:
            return False
        k = _max_size(s, x.type.shape[-1])
        shape = x.type.shape[:-1] + (x.type.shape[-2],)
        return s.assign(self.name, "torch.matmul({0}, {0}.transpose(-1, -2))", (Ref(x.name),),
                        TensorType(shape, x.type.dtype), x.bound * x.bound * k) is not None


@dataclass(frozen=True)
class Softmax:
    name: str
    template: str
    family: str = "nn"
    weight: float = 0.8
    bounded: bool = True

    def build(self, s: Scope) -> bool:
        x = s.pick(lambda v: v.type.is_float and v.type.rank >= 1)
        if x is None:
            return False
        d = s.ch.integer(0, x.type.rank - 1)
        n = _max_size(s, x.type.shape[d])
        bound = 1.0 if self.bounded else 2 * x.bound + math.log(max(n, 1)) + 1
        return s.assign(self.name, self.template, (Ref(x.name), Lit(d)), x.type, bound) is not None


@dataclass(frozen=True)
class LayerNorm:
    name: str = "torch.nn.functional.layer_norm"
    family: str = "nn"
    weight: float = 0.5

    def build(self, s: Scope) -> bool:
        x = s.pick(lambda v: v.type.is_float and v.type.rank >= 1)
        if x is None:
            return False
        n = _max_size(s, x.type.shape[-1])
        return s.assign(self.name, "torch.nn.functional.layer_norm({0}, {0}.shape[-1:])", (Ref(x.name),),
                        x.type, math.sqrt(max(n, 1)) + 1) is not None


# ---- in-place ops -------------------------------------------------------------
def _writable(v: Val) -> bool:
    return v.writable and v.type.dtype in NUMERIC


@dataclass(frozen=True)
class InplaceBinary:
    """``target.<op>_(other)``: other broadcasts to target and casts into its dtype."""
    name: str
    method: str
    bound: Callable[[float, float], float]
    float_only: bool = False
    family: str = "inplace"
    weight: float = 1.0

    def build(self, s: Scope) -> bool:
        t = s.pick(lambda v: _writable(v) and (v.type.is_float or not self.float_only))
        if t is None:
            return False
        o = s.pick(lambda v: v.root != t.root and is_numeric(v)
                   and shapes.broadcast(t.type.shape, v.type.shape) == t.type.shape
                   and can_cast(promote(t.type.dtype, v.type.dtype), t.type.dtype))
        if o is None:
            return False
        return s.mutate(self.name, "{0}.%s({1})" % self.method, (Ref(t.name), Ref(o.name)), t,
                        self.bound(t.bound, o.bound))


@dataclass(frozen=True)
class InplaceScalar:
    """``view_expr(target).<op>_(c)``: in-place through a view (slice, transpose, diagonal)."""
    name: str
    template: str                  # e.g. "{0}[..., 1:].mul_(2)"
    min_rank: int = 1
    float_only: bool = False
    bound: Callable[[float], float] = lambda b: b
    family: str = "inplace"
    weight: float = 1.0

    def build(self, s: Scope) -> bool:
        t = s.pick(lambda v: _writable(v) and v.type.rank >= self.min_rank
                   and (v.type.is_float or not self.float_only))
        if t is None:
            return False
        return s.mutate(self.name, self.template, (Ref(t.name),), t, self.bound(t.bound))
