"""The typed program IR: frozen dataclasses, and a lossless JSON codec.

Contract: a ``Case`` is everything needed to rebuild one test exactly, with no
randomness left in it: the ``Program`` (inputs with symbolic shapes, a body of
statements, outputs), the call schedule (one concrete size per symbol per call,
plus a value seed), and the compile settings. ``to_jsonable``/``from_jsonable``
round-trip every IR object through plain JSON, so a finding on disk can always
be rebuilt.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Union

Dim = Union[int, str]  # a literal size, or the name of a symbolic size

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
INT_DTYPES = ("int8", "uint8", "int16", "int32", "int64")
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + ("bool",)


@dataclass(frozen=True)
class TensorType:
    shape: tuple[Dim, ...]
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOAT_DTYPES

    @property
    def is_int(self) -> bool:
        return self.dtype in INT_DTYPES

    @property
    def is_bool(self) -> bool:
        return self.dtype == "bool"


# ---- arguments -------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """A reference to a tensor variable."""
    name: str


@dataclass(frozen=True)
class Lit:
    """A Python literal: int, float, bool, str, None, or a tuple of those."""
    value: Any


@dataclass(frozen=True)
class Size:
    """``var.shape[dim]``, read at run time (so it follows dynamic shapes)."""
    var: str
    dim: int


Arg = Union[Ref, Lit, Size]


# ---- statements --------------------------------------------------------------
@dataclass(frozen=True)
class Assign:
    """``out = template.format(*args)``; ``op`` is the registry name."""
    out: str
    op: str
    template: str
    args: tuple[Arg, ...]
    type: TensorType


@dataclass(frozen=True)
class Mutate:
    """An in-place update statement ``template.format(*args)`` of ``target``."""
    target: str
    op: str
    template: str
    args: tuple[Arg, ...]


@dataclass(frozen=True)
class SizeCond:
    """``var.shape[dim] > value``: a guard on a size."""
    var: str
    dim: int
    value: int


@dataclass(frozen=True)
class If:
    """Both branches end by assigning every name in ``joins`` (same types)."""
    cond: SizeCond
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]
    joins: tuple[tuple[str, TensorType], ...]


Stmt = Union[Assign, Mutate, If]


@dataclass(frozen=True)
class Input:
    name: str
    type: TensorType
    layout: str = "contiguous"  # contiguous | transposed | sliced | offset | expanded | channels_last
    requires_grad: bool = False


@dataclass(frozen=True)
class Program:
    inputs: tuple[Input, ...]
    body: tuple[Stmt, ...]
    outputs: tuple[str, ...]
    symbols: tuple[str, ...]
    name: str = "fn"


@dataclass(frozen=True)
class Call:
    """One call of the schedule: a size for each program symbol, and a value seed."""
    sizes: tuple[int, ...]
    seed: int


@dataclass(frozen=True)
class CompileSpec:
    backend: str = "inductor"
    dynamic: bool | None = None
    fullgraph: bool = False
    mode: str | None = None
    device: str = "cpu"


@dataclass(frozen=True)
class Case:
    program: Program
    calls: tuple[Call, ...]
    compile: CompileSpec
    seed: int
    generator_version: str

    def with_compile(self, **changes: Any) -> "Case":
        return dataclasses.replace(self, compile=dataclasses.replace(self.compile, **changes))


# ---- JSON codec -----------------------------------------------------------------
_CLASSES = {c.__name__: c for c in (TensorType, Ref, Lit, Size, Assign, Mutate, SizeCond,
                                    If, Input, Program, Call, CompileSpec, Case)}


def to_jsonable(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj):
        out = {"_t": type(obj).__name__}
        for f in dataclasses.fields(obj):
            out[f.name] = to_jsonable(getattr(obj, f.name))
        return out
    if isinstance(obj, tuple):
        return {"_tuple": [to_jsonable(x) for x in obj]}
    if isinstance(obj, list):
        return [to_jsonable(x) for x in obj]
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return {"_float": repr(obj)}
    return obj


def from_jsonable(data: Any) -> Any:
    if isinstance(data, dict):
        if "_tuple" in data:
            return tuple(from_jsonable(x) for x in data["_tuple"])
        if "_float" in data:
            return float(data["_float"])
        kind = data.get("_t")
        if kind not in _CLASSES:
            raise ValueError(f"unknown IR node {kind!r}")
        kwargs = {k: from_jsonable(v) for k, v in data.items() if k != "_t"}
        return _CLASSES[kind](**kwargs)
    if isinstance(data, list):
        return [from_jsonable(x) for x in data]
    return data


# ---- small queries used by the builder and the reducer ------------------------------
def walk(body: tuple[Stmt, ...]):
    """Every statement, depth first, branches included."""
    for s in body:
        yield s
        if isinstance(s, If):
            yield from walk(s.then)
            yield from walk(s.orelse)


def refs_of(stmt: Stmt) -> set[str]:
    """Names a statement reads (an If's condition and both branches included)."""
    names: set[str] = set()
    if isinstance(stmt, (Assign, Mutate)):
        for a in stmt.args:
            if isinstance(a, Ref):
                names.add(a.name)
            elif isinstance(a, Size):
                names.add(a.var)
        if isinstance(stmt, Mutate):
            names.add(stmt.target)
    elif isinstance(stmt, If):
        names.add(stmt.cond.var)
        for s in stmt.then + stmt.orelse:
            names |= refs_of(s)
    return names


def op_names(program: Program) -> list[str]:
    return [s.op for s in walk(program.body) if isinstance(s, (Assign, Mutate))]
