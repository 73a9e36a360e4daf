"""Op-spec classes and the helpers every op module shares.

Contract: every spec has a ``name`` (the real torch function or method it
exercises; a ``[variant]`` suffix marks a second spec of the same callable), a
``family``, a ``weight``, and ``build(scope) -> bool`` which either appends one
well-typed statement to the scope (drawing every decision from the scope's
choice stream) or returns False and leaves the scope as it was. Specs encode
the shape rule, the dtype rule and the value-range rule of their op; nothing
here runs torch ops.

Value rules: every Val has a magnitude ``bound`` (results must stay within
``scope.LIMIT``); ops that are discontinuous in their input (floor, compare,
float->int casts, sign, ...) only take ``exact`` values, which are bit-identical
in every backend, so rounding differences can never flip a decision. Ops that
fail or produce NaN on empty or size-1 dims check the schedule's smallest size.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from . import shapes
from .ir import FLOAT_DTYPES, INT_DTYPES, Lit, Ref, TensorType
from .scope import LIMIT, Scope, Val, can_cast, promote, promote_vals

NUMERIC = FLOAT_DTYPES + INT_DTYPES
SIGNED = tuple(d for d in NUMERIC if d != "uint8")
# dtype classes an op accepts, by short name
DT = {
    "float": FLOAT_DTYPES, "num": NUMERIC, "numb": NUMERIC + ("bool",), "signed": SIGNED,
    "int": INT_DTYPES, "intb": INT_DTYPES + ("bool",), "bool": ("bool",),
    "tofloat": NUMERIC + ("bool",), "any": NUMERIC + ("bool",),
    "f32up": ("float32", "float64"), "sintb": ("int8", "int16", "int32", "int64", "bool"), "nohalf": ("float32", "float64", "bfloat16"),
}


def is_float(v: Val) -> bool:
    return v.type.is_float


def is_numeric(v: Val) -> bool:
    return v.type.dtype in NUMERIC


def is_signed_numeric(v: Val) -> bool:
    return v.type.dtype in SIGNED


def max_size(s: Scope, dim) -> int:
    return s.max_dim(dim)


_max_size = max_size  # older name


def float_out(dtype: str) -> str:
    """The dtype an int-to-float op gives: floats keep theirs, the rest become float32."""
    return dtype if dtype in FLOAT_DTYPES else "float32"


def acc_out(dtype: str) -> str:
    """sum/prod/cumsum dtype rule: integer and bool inputs accumulate in int64."""
    return dtype if dtype in FLOAT_DTYPES else "int64"


def exact_of(t_dtype: str, keeps: bool, *vals: Val) -> bool | None:
    """Exactness of a result: ints are always exact; floats only through exact-preserving ops."""
    if t_dtype not in FLOAT_DTYPES:
        return None
    return keeps and all(v.exact for v in vals)


class Spec:
    """A spec whose build rule is a plain function ``fn(scope, spec) -> bool``."""

    def __init__(self, name: str, family: str, fn: Callable[[Scope, "Spec"], bool],
                 weight: float = 1.0, **opts: Any):
        self.name, self.family, self.fn, self.weight, self.opts = name, family, fn, weight, opts

    def build(self, s: Scope) -> bool:
        return self.fn(s, self)

    def __getattr__(self, key: str) -> Any:
        try:
            return self.__dict__["opts"][key]
        except KeyError:
            raise AttributeError(key) from None

    def __repr__(self) -> str:
        return f"Spec({self.name!r})"


@dataclass(frozen=True)
class Unary:
    """``out = template(x)``, same shape.

    dtypes: the dtype class accepted (``DT``); "tofloat" promotes ints and bool to float32.
    exact_in: discontinuous op, only drawn on exact inputs. keeps_exact: exact in, exact out.
    """
    name: str
    template: str
    dtypes: str = "float"
    bound: Callable[[float], float] = lambda b: b
    max_in: float = math.inf
    out_dtype: str | None = None
    exact_in: bool = False
    keeps_exact: bool = False
    family: str = "pointwise"
    weight: float = 1.0

    def build(self, s: Scope) -> bool:
        no_bool = "abs(" in self.template  # abs is not defined for bool
        x = s.pick(lambda v: v.type.dtype in DT[self.dtypes] and v.bound <= self.max_in
                   and (v.exact or not self.exact_in) and not (no_bool and v.type.is_bool))
        if x is None:
            return False
        dtype = self.out_dtype or (float_out(x.type.dtype) if self.dtypes == "tofloat" else x.type.dtype)
        t = TensorType(x.type.shape, dtype)
        return s.assign(self.name, self.template, (Ref(x.name),), t, self.bound(x.bound),
                        exact=exact_of(dtype, self.keeps_exact, x), contig=x.contig) is not None


@dataclass(frozen=True)
class Binary:
    """``out = template(a, b)`` with broadcasting and type promotion.

    out_dtype: fixed result dtype (comparisons -> bool); float_result: true division
    (ints promote to float32); no_uint8: refuse a uint8 result (it would wrap).
    """
    name: str
    template: str
    bound: Callable[[float, float], float]
    dtypes: str = "num"
    out_dtype: str | None = None
    float_result: bool = False
    exact_in: bool = False
    keeps_exact: bool = False
    no_uint8: bool = False
    same_dtype: bool = False          # the template casts b to a's dtype
    family: str = "pointwise"
    weight: float = 1.0

    def build(self, s: Scope) -> bool:
        ok0 = lambda v: v.type.dtype in DT[self.dtypes] and (v.exact or not self.exact_in)
        a = s.pick(ok0)
        if a is None:
            return False
        ok = lambda v: ok0(v) and shapes.broadcast(a.type.shape, v.type.shape) is not None
        b = s.pick(lambda v: ok(v) and v is not a) or (a if ok(a) else None)
        if b is None:
            return False
        shape = shapes.broadcast(a.type.shape, b.type.shape)
        dtype = self.out_dtype or (a.type.dtype if self.same_dtype else promote_vals(a, b))
        if self.float_result:
            dtype = float_out(dtype)
        if self.no_uint8 and dtype == "uint8":
            return False
        return s.assign(self.name, self.template, (Ref(a.name), Ref(b.name)), TensorType(shape, dtype),
                        self.bound(a.bound, b.bound), exact=exact_of(dtype, self.keeps_exact, a, b),
                        contig=a.contig and b.contig) is not None


@dataclass(frozen=True)
class Reduce:
    """``out = template(x, dim, keepdim)`` over one dim, or over all dims (``full``).

    min_n: the reduced dim must have at least this many elements on every call
    (1 for ops that raise or give NaN on empty dims, 2 for var/std).
    """
    name: str
    template: str                      # "{0}.sum({1}, keepdim={2})"
    dtypes: str = "num"
    bound: Callable[[float, int], float] = lambda b, n: b
    max_in: float = math.inf
    out_dtype: Callable[[str], str] = lambda d: d
    keeps_dim: bool = False            # cumulative ops: shape kept, no keepdim argument
    full: str | None = None            # template of the all-dims form, e.g. "{0}.sum()"
    min_n: int = 0
    keeps_exact: bool = False
    family: str = "reduction"
    weight: float = 1.0

    def build(self, s: Scope) -> bool:
        x = s.pick(lambda v: v.type.dtype in DT[self.dtypes] and v.bound <= self.max_in
                   and (v.type.rank >= 1 or self.full))
        if x is None:
            return False
        dtype = self.out_dtype(x.type.dtype)
        if self.full and (x.type.rank == 0 or s.ch.boolean(0.25)):
            n = max_size(s, shapes.numel(x.type.shape))
            if s.min_dim(shapes.numel(x.type.shape)) < self.min_n:
                return False
            return s.assign(self.name, self.full, (Ref(x.name),), TensorType((), dtype),
                            self.bound(x.bound, n), exact=exact_of(dtype, self.keeps_exact, x)) is not None
        d = s.ch.integer(0, x.type.rank - 1)
        if s.min_dim(x.type.shape[d]) < self.min_n:
            return False
        n = max_size(s, x.type.shape[d])
        if self.keeps_dim:
            shape, args = x.type.shape, (Ref(x.name), Lit(d))
        else:
            keep = s.ch.boolean()
            shape = tuple(1 if i == d else e for i, e in enumerate(x.type.shape)) if keep else \
                x.type.shape[:d] + x.type.shape[d + 1:]
            args = (Ref(x.name), Lit(d), Lit(keep))
        t = TensorType(shape, dtype)
        return s.assign(self.name, self.template, args, t, self.bound(x.bound, n),
                        exact=exact_of(dtype, self.keeps_exact, x)) is not None


# ---- small helpers used by the op modules ----------------------------------------
def writable(v: Val) -> bool:
    return v.writable and v.type.dtype in NUMERIC


def bcast_to(target: tuple, v: Val) -> bool:
    """v broadcasts to exactly ``target``'s shape."""
    return shapes.broadcast(target, v.type.shape) == tuple(target)


def castable_into(src: str, dst: str) -> bool:
    return can_cast(promote(dst, src), dst)


def limit(dtype: str) -> float:
    return LIMIT[dtype]


def nonempty_dims(s: Scope, x: Val, at_least: int = 1) -> list[int]:
    return [i for i, d in enumerate(x.type.shape) if s.min_dim(d) >= at_least]


__all__ = ["DT", "NUMERIC", "SIGNED", "Spec", "Unary", "Binary", "Reduce", "is_float", "is_numeric",
           "is_signed_numeric", "max_size", "float_out", "acc_out", "exact_of", "writable", "bcast_to",
           "castable_into", "limit", "nonempty_dims", "field", "dataclass"]
