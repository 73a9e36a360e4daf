"""The typed program IR: frozen dataclasses, and a lossless JSON codec.

Contract: a ``Case`` is everything needed to rebuild one test exactly, with no
randomness left in it: the ``Program`` (inputs with symbolic shapes, a body of
statements, outputs), the call schedule (one concrete size per symbol per call,
plus a value seed), and the compile settings. ``to_jsonable``/``from_jsonable``
round-trip every IR object through plain JSON, so a finding on disk can always
be rebuilt (a field marked ``omit_default`` is written only when it differs from its default).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Union

Dim = Union[int, str]  # a literal size, or the name of a symbolic size
#: the dim of a value whose size depends on data (nonzero, masked_select, unique): no static size
DATA_DEPENDENT = "?"

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
class DataCond:
    """A condition on tensor data, read into Python (a graph break).

    kind ``any``: ``(var > value).any()``; kind ``item``:
    ``int((var > value).sum().item()) % 2 == 1``. Only drawn on values whose
    data is exact in every run (unmutated inputs), so no run sits on a tie.
    """
    var: str
    kind: str
    value: float


@dataclass(frozen=True)
class ScalarCond:
    """``name > value`` on a Python int (a scalar argument or a global)."""
    name: str
    value: int


Cond = Union[SizeCond, DataCond, ScalarCond]


@dataclass(frozen=True)
class If:
    """Both branches end by assigning every name in ``joins`` (same types)."""
    cond: Cond
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]
    joins: tuple[tuple[str, TensorType], ...]


@dataclass(frozen=True)
class Loop:
    """A Python ``for`` loop.

    kind ``range``: ``for index in range(count)`` (count an int, or the name of an
    int scalar argument/global); kind ``tuple``: ``for index in (items...)``;
    kind ``iter``: ``for index in items[0]`` (a list/tuple input) or
    ``items[0].values()`` (a dict input). The body rebinds the ``carried`` names
    (defined before the loop, same types) and never mutates anything.
    """
    index: str
    kind: str
    count: Union[int, str]
    items: tuple[str, ...]
    body: tuple["Stmt", ...]
    carried: tuple[tuple[str, TensorType], ...]
    item_type: TensorType | None = None   # the type of ``index`` for tuple/iter/dict loops


@dataclass(frozen=True)
class While:
    """``counter = var.shape[dim]; while counter > 1: body; counter = counter // 2``."""
    counter: str
    var: str
    dim: int
    body: tuple["Stmt", ...]
    carried: tuple[tuple[str, TensorType], ...]


@dataclass(frozen=True)
class With:
    """A context block: kind ``autocast`` (CPU, bfloat16) or ``no_autocast``."""
    kind: str
    body: tuple["Stmt", ...]


@dataclass(frozen=True)
class Return:
    """An early ``return`` of these values (only inside an ``If`` branch)."""
    values: tuple[str, ...]


@dataclass(frozen=True)
class CallFn:
    """``out = fn(*args)``: a helper function or a submodule (``self.sub0``)."""
    out: str
    fn: str
    args: tuple[Arg, ...]
    type: TensorType


@dataclass(frozen=True)
class CondOp:
    """``out = torch.cond(pred, true_fn, false_fn, (operands...))``."""
    out: str
    pred: Cond
    true_fn: str
    false_fn: str
    operands: tuple[str, ...]
    type: TensorType


Stmt = Union[Assign, Mutate, If, Loop, While, With, Return, CallFn, CondOp]


@dataclass(frozen=True)
class Function:
    """A helper emitted at module level: ``def name(params): body; return result``.

    nested: decorated with ``torch.compiler.nested_compile_region``."""
    name: str
    params: tuple[tuple[str, TensorType], ...]
    body: tuple[Stmt, ...]
    result: str
    nested: bool = False


@dataclass(frozen=True)
class StateTensor:
    """A parameter or buffer of a module (``kind`` param|buffer), literal shape."""
    name: str
    type: TensorType
    kind: str = "param"
    requires_grad: bool = True   # params only: False for frozen ones


@dataclass(frozen=True)
class ModuleDef:
    """An ``nn.Module`` class: its state, submodules (attribute name -> class) and forward.

    The top module's forward body is ``Program.body`` (``forward`` is None there);
    a submodule's forward is a Function whose body refers to its state as ``self.<name>``.
    """
    cls: str
    state: tuple[StateTensor, ...]
    submodules: tuple[tuple[str, "ModuleDef"], ...] = ()
    forward: Function | None = None
    # torch.nn library modules: (attribute, constructor source), e.g. ("lib0", "torch.nn.LayerNorm(8)")
    library: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Global:
    """A module-level global read by the program (``kind`` tensor|int|float|rebound).

    Scalar globals take their value from each Call; tensor globals are seeded
    from the call seed like inputs and may be mutated in place; ``rebound``
    globals are None before each call and rebound (``global g; g = ...``) inside it.
    """
    name: str
    kind: str
    type: TensorType | None = None


@dataclass(frozen=True)
class Input:
    """One argument of the program.

    kind ``tensor``; ``list``/``tuple``/``dict`` (``count`` tensors of ``type``,
    dict keys ``k0``, ``k1``...); ``int``/``float`` (a Python scalar, its value
    per call in ``Call.scalars``; ``type`` is a placeholder); ``alias`` (a view of
    the earlier input ``alias_of``: ``view`` is same|view|transposed).
    """
    name: str
    type: TensorType
    layout: str = "contiguous"  # contiguous | transposed | sliced | offset | expanded | channels_last
    requires_grad: bool = False
    kind: str = "tensor"
    count: int = 0
    alias_of: str = ""
    view: str = ""
    special: bool = False   # float values salted with NaN, +-inf, -0.0, huge and tiny magnitudes


@dataclass(frozen=True)
class Program:
    inputs: tuple[Input, ...]
    body: tuple[Stmt, ...]
    outputs: tuple[str, ...]
    symbols: tuple[str, ...]
    name: str = "fn"
    helpers: tuple[Function, ...] = ()       # module-level functions (helpers, torch.cond branches)
    module: ModuleDef | None = None          # when set, ``body`` is ``Model.forward``
    globals: tuple[Global, ...] = ()
    out_kind: str = "tuple"                  # tuple | list | dict | single


@dataclass(frozen=True)
class Call:
    """One call of the schedule: a size for each program symbol, a value seed, and call state.

    scalars: (input name, value) for each int/float input; globals: (name, value)
    for each scalar global; grad_mode: grad | no_grad | inference;
    inference_inputs: inputs are created under ``torch.inference_mode``;
    requires_grad: names of tensor inputs that require grad this call (None:
    each Input's own flag); marks: (input name, dim, mark|maybe) for
    ``torch._dynamo.mark_dynamic`` / ``maybe_mark_dynamic``.
    """
    sizes: tuple[int, ...]
    seed: int
    scalars: tuple[tuple[str, Any], ...] = ()
    globals: tuple[tuple[str, Any], ...] = ()
    grad_mode: str = "grad"
    inference_inputs: bool = False
    requires_grad: tuple[str, ...] | None = None
    marks: tuple[tuple[str, int, str], ...] = ()
    caller: tuple[str, ...] = ()   # what the caller does around the call: see generators.callers


@dataclass(frozen=True)
class CompileSpec:
    backend: str = "inductor"
    dynamic: bool | None = None
    fullgraph: bool = False
    mode: str | None = None
    device: str = "cpu"
    # torch._dynamo.config values set while compiling and running (name, value), e.g.
    # capture_scalar_outputs: part of the case, so a repro carries them
    config: tuple[tuple[str, Any], ...] = ()
    # "" (the fuzzer's default): Inductor's FX-graph and AOTAutograd caches off; "warm": both on
    # as users have them, and the case is judged again in a second process served from the cache.
    # Left out of the JSON while default, so every case stored before it keeps its bytes
    cache: str = dataclasses.field(default="", metadata={"omit_default": True})


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
                                    If, Input, Program, Call, CompileSpec, Case, DataCond,
                                    ScalarCond, Loop, While, With, Return, CallFn, CondOp,
                                    Function, StateTensor, ModuleDef, Global)}


def to_jsonable(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj):
        out = {"_t": type(obj).__name__}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if f.metadata.get("omit_default") and value == f.default:
                continue
            out[f.name] = to_jsonable(value)
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
def children(stmt: Stmt) -> tuple[tuple[Stmt, ...], ...]:
    """The nested statement blocks of one statement."""
    if isinstance(stmt, If):
        return (stmt.then, stmt.orelse)
    if isinstance(stmt, (Loop, While, With)):
        return (stmt.body,)
    return ()


def walk(body: tuple[Stmt, ...]):
    """Every statement, depth first, nested blocks included."""
    for s in body:
        yield s
        for block in children(s):
            yield from walk(block)


def all_bodies(program: Program):
    """The main body, then every helper and submodule forward body."""
    yield program.body
    for f in program.helpers:
        yield f.body
    for m in submodules(program):
        if m.forward is not None:
            yield m.forward.body


def submodules(program: Program):
    """Every ModuleDef below the top module, depth first."""
    def rec(m):
        for _attr, sub in m.submodules:
            yield sub
            yield from rec(sub)
    if program.module is not None:
        yield from rec(program.module)


def walk_program(program: Program):
    for body in all_bodies(program):
        yield from walk(body)


def cond_refs(c) -> set[str]:
    if isinstance(c, (SizeCond, DataCond)):
        return {c.var}
    if isinstance(c, ScalarCond):
        return {c.name}
    return set()


def _arg_names(args) -> set[str]:
    names = set()
    for a in args:
        if isinstance(a, Ref):
            names.add(a.name)
        elif isinstance(a, Size):
            names.add(a.var)
    return names


def refs_of(stmt: Stmt) -> set[str]:
    """Names a statement reads (conditions and nested blocks included)."""
    names: set[str] = set()
    if isinstance(stmt, (Assign, Mutate)):
        names |= _arg_names(stmt.args)
        if isinstance(stmt, Mutate):
            names.add(stmt.target)
    elif isinstance(stmt, CallFn):
        names |= _arg_names(stmt.args)
    elif isinstance(stmt, CondOp):
        names |= cond_refs(stmt.pred) | set(stmt.operands)
    elif isinstance(stmt, Return):
        names |= set(stmt.values)
    else:
        if isinstance(stmt, If):
            names |= cond_refs(stmt.cond)
        elif isinstance(stmt, Loop):
            names |= set(stmt.items)
            if isinstance(stmt.count, str):
                names.add(stmt.count)
            names |= {n for n, _ in stmt.carried}
        elif isinstance(stmt, While):
            names.add(stmt.var)
            names |= {n for n, _ in stmt.carried}
        for block in children(stmt):
            for s in block:
                names |= refs_of(s)
    return names


def op_names(program: Program) -> list[str]:
    out = []
    for s in walk_program(program):
        if isinstance(s, (Assign, Mutate)):
            out.append(s.op)
        elif isinstance(s, CondOp):
            out.append("torch.cond")
    return out


def tainted_sources(program: Program) -> set[str]:
    """Inputs, ``self.*`` state and globals whose values reach a tensor written in place.

    Such a source must not require grad: eager would only fail in backward ("a
    variable needed for gradient computation has been modified by an inplace
    operation") while a compiler tracing the joint graph fails at once. Helper and
    submodule calls whose body writes in place taint all their arguments.
    """
    deps: dict[str, set[str]] = {}
    writers = {f.name for f in program.helpers if any(isinstance(s, Mutate) for s in walk(f.body))}
    if program.module is not None:
        for attr, sub in program.module.submodules:
            if sub.forward is not None and any(isinstance(s, Mutate) for s in walk(sub.forward.body)):
                writers.add(f"self.{attr}")
    tainted: set[str] = set()
    # a view of a non-leaf copy of its base carries the base's gradient: what it reaches, the base does
    for i in program.inputs:
        if i.kind == "alias" and i.view.startswith("nonleaf:"):
            deps[i.name] = {i.name, i.alias_of}

    def d(names) -> set[str]:
        out: set[str] = set()
        for n in names:
            out |= deps.get(n, {n})
        return out

    for s in walk(program.body):  # names rebound (joins, loop-carried) accumulate their sources
        if isinstance(s, (Assign, CallFn)):
            deps[s.out] = deps.get(s.out, set()) | d(refs_of(s))
            if isinstance(s, CallFn) and s.fn in writers:
                tainted |= deps[s.out]
        elif isinstance(s, CondOp):
            deps[s.out] = deps.get(s.out, set()) | d(s.operands)
        elif isinstance(s, Mutate):
            u = d(refs_of(s))
            if not s.op.endswith(GRAD_SAFE_SUFFIX):  # updates whose backward needs nothing overwritten
                tainted |= u
            deps[s.target] = u
    return tainted


#: ops whose name ends so update a fresh non-leaf in place in a way autograd accepts
GRAD_SAFE_SUFFIX = "[nonleaf]"
