"""Compiler edges drawn on purpose: vector-width remainders, size-0 and size-1 dims, alias offsets.

Contract: ``EDGE_CAPABILITIES`` maps each edge capability to its default weight (the chance one
case gets it; ``build.py`` draws the set one case gets with ``reach.plan_tail``, as for the tail
forms). ``BUILDERS`` maps each to ``(ch, scope, program, calls) -> (program, calls)``, which
returns both unchanged when the form cannot apply. ``build.py`` runs them after everything else,
so they are the stream's very last draws and a seed that draws none keeps its program, schedule
and compile settings byte for byte. ``edge_features(case)`` reads each capability from the IR and
the call schedule (the capability's feature bears its name), whether this module or the regular
builders made it. The ops emitted here are the registry's own by name where it has them (so
known-bug rules and novelty steering read them as that op); ``FAMILIES`` gives the others a family
(``registry.FAMILY_OF``).

* ``reduce_tail_remainder``: a fresh symbol and a 1-D input ``xk`` of it in the dtype of an
  existing value ``v``; ``v.unsqueeze(-1) * xk`` (``+`` for integers) is reduced over its last
  dim (sum, amax, mean, softmax, var, logsumexp, any). The symbol is an odd size below the
  dtype's CPU vector width (``VEC_WIDTH``: AVX512 lanes) in one call and at or above it in
  another, so the vector body and the scalar tail both run, and a dynamic graph sees both.
* ``edge_dims``: the same shape of program on a fresh symbol that is 0 in one call and 1 in
  another: ``v`` is broadcast over it and the result is reduced over it with ops defined on
  empty dims (sum, nansum, mean, logsumexp, softmax, cumsum, any, all), or over ``v``'s first
  dim, keeping the edge dim in the result.
* ``alias_base_write_offset_view``: an input ``x`` written in place as the body's first
  statement (``neg_``, ``mul_(-1)``, ``x[:1] *= -1``, a flipped copy, ``logical_not_``: every
  write keeps each magnitude, so the bounds the body was built on hold) while another argument
  is its offset (``x[1:]``) or transposed alias, an existing one or a new one; the program
  returns a view of that alias (sliced, transposed, strided, unsqueezed, narrowed), so
  AOTAutograd regenerates an output view with a storage offset or strides after a base write.

The programs stay valid by construction: the new symbol is used by nothing else, the new inputs
never require grad, and a write at the top of the body overwrites nothing saved for backward.
Programs with an early return (the tail statements would not run on every path) or one output
get none of them.
"""
from __future__ import annotations

import dataclasses
import math

from . import shapes
from .choices import ChoiceStream
from .ir import (DATA_DEPENDENT, Assign, Call, Case, Input, Lit, Mutate, Program, Ref, Return, TensorType,
                 walk, walk_program)
from .scope import LIMIT, Scope

#: capability -> default weight: the chance one case gets it
EDGE_CAPABILITIES = {
    "reduce_tail_remainder": 0.05,         # an odd size below the vector width in a reduced last dim
    "edge_dims": 0.05,                     # a reduced / broadcast dim of size 0 in one call, 1 in another
    "alias_base_write_offset_view": 0.04,  # a base written in place, a view of its offset/transposed alias out
}

#: elements per CPU vector register (AVX512; AVX2 holds half): the tiling Inductor's CPU kernels use
VEC_WIDTH = {"float64": 8, "int64": 8, "float32": 16, "int32": 16, "float16": 32, "bfloat16": 32,
             "int16": 32, "int8": 64, "uint8": 64, "bool": 64}
#: the odd "below the width" sizes never go past this (the 8-bit widths would make big inputs)
_ODD_CAP = 32

# (op name, template over the product ``{0}``, dtype kinds, reduced dim (-1: the new one, 0: v's
# first), keeps the dim, bound(b, n), out dtype (None: the input's))
_F, _I, _B = "float", "int", "bool"
_acc = {"bool": "int64", "int8": "int64", "uint8": "int64", "int16": "int64", "int32": "int64"}


def _sum_b(b, n):
    return b * n


def _keep_b(b, n):
    return b


def _one_b(b, n):
    return 1.0


def _lse_b(b, n):
    return b + math.log(max(n, 1)) + 1


def _bool(d):
    return "bool"


def _acc_out(d):
    return _acc.get(d, d)


# The reductions are the registry's own ops by name (and their dim a literal argument, as there):
# known-bug rules, novelty steering and the features read them as the same op.
TAIL_OPS = (
    ("torch.sum", "{0}.sum({1})", (_F, _I, _B), -1, False, _sum_b, _acc_out),
    ("torch.amax", "{0}.amax({1})", (_F, _I), -1, False, _keep_b, None),
    ("torch.mean", "{0}.mean({1})", (_F,), -1, False, _keep_b, None),
    ("torch.softmax", "torch.softmax({0}, {1})", (_F,), -1, True, _one_b, None),
    ("torch.var", "torch.var({0}, {1})", (_F,), -1, False, lambda b, n: 4 * b * b, None),
    ("torch.logsumexp", "torch.logsumexp({0}, {1})", (_F,), -1, False, _lse_b, None),
    ("torch.any", "{0}.any({1})", (_I, _B), -1, False, _one_b, _bool),
)
#: over the new dim, reductions that run on an empty dim (amax raises there; var warns, its
#: degrees of freedom <= 0); over v's first dim, the new (edge) dim kept in the result (amax and
#: mean only where that first dim is never empty)
EDGE_OPS = (
    ("torch.sum", "{0}.sum({1})", (_F, _I, _B), -1, False, _sum_b, _acc_out),
    ("torch.nansum", "torch.nansum({0}, {1})", (_F,), -1, False, _sum_b, None),
    ("torch.mean", "{0}.mean({1})", (_F,), -1, False, _keep_b, None),
    ("torch.logsumexp", "torch.logsumexp({0}, {1})", (_F,), -1, False, _lse_b, None),
    ("torch.softmax", "torch.softmax({0}, {1})", (_F,), -1, True, _one_b, None),
    ("torch.cumsum", "torch.cumsum({0}, {1})", (_F, _I), -1, True, _sum_b, _acc_out),
    ("torch.any", "{0}.any({1})", (_I, _B), -1, False, _one_b, _bool),
    ("torch.all", "torch.all({0}, {1})", (_I, _B), -1, False, _one_b, _bool),
    ("torch.sum", "{0}.sum({1})", (_F, _I), 0, False, _sum_b, _acc_out),
    ("torch.amax", "{0}.amax({1})", (_F, _I), 0, False, _keep_b, None),
    ("torch.mean", "{0}.mean({1})", (_F,), 0, False, _keep_b, None),
)
#: reductions that need the reduced dim nonempty on every call
_NONEMPTY = ("torch.amax", "torch.mean")
#: the products that broadcast a value over the new symbol: the size edges' own statements
BCAST_OPS = ("Tensor.mul[edge_bcast]", "Tensor.add[edge_bcast]")

# (op name, template, minimum rank, dtypes: "signed" floats and signed ints | "bool" | "any"); the
# registry's names where it has the op (``x[:1] *= -1`` is traced as a read, a mul_, a setitem)
BASE_WRITES = (
    ("Tensor.neg_", "{0}.neg_()", 0, "signed"),
    ("Tensor.mul_", "{0}.mul_(-1)", 0, "signed"),
    ("Tensor.__setitem__[imul]", "{0}[:1] *= -1", 1, "signed"),
    ("Tensor.copy_", "{0}.copy_({0}.flip(0))", 1, "any"),
    ("Tensor.logical_not_", "{0}.logical_not_()", 0, "bool"),
)
# (op name, template, minimum rank, what the shape needs: None | "nonempty0" | "rank2")
ALIAS_VIEWS = (
    ("Tensor.__getitem__", "{0}[1:]", 1, "nonempty0"),
    ("Tensor.transpose", "{0}.transpose(-1, -2)", 2, None),
    ("Tensor.__getitem__", "{0}[..., ::2]", 1, None),
    ("Tensor.unsqueeze", "{0}.unsqueeze(0)", 0, None),
    ("Tensor.narrow", "{0}.narrow(0, 0, 1)", 1, "nonempty0"),
    ("Tensor.t", "{0}.t()", 2, "rank2"),
)

#: the ops emitted here that the registry lacks, with their families
FAMILIES = {**{n: "pointwise" for n in BCAST_OPS}, "Tensor.__setitem__[imul]": "inplace",
            "Tensor.logical_not_": "inplace"}
#: the module statement (``structure.module_stmt``) whose linear layer reads a last-dim mean
_LINEAR_MEAN = "torch.nn.functional.linear({0}.mean(-1"
#: registry ops outside the reduction family that reduce over their literal dim argument
_ALSO_REDUCE = ("torch.softmax",)
#: the alias views an input may take that share its base's storage at an offset or with strides
OFFSET_VIEWS = ("offset", "transposed")


# ---- helpers ---------------------------------------------------------------------------------
def _kind(dtype: str) -> str:
    return _B if dtype == "bool" else _F if dtype in ("float16", "bfloat16", "float32", "float64") else _I


def _free(v) -> bool:
    return not v.name.startswith(("self.", "G")) and DATA_DEPENDENT not in v.type.shape


def _applies(program: Program) -> bool:
    return program.out_kind != "single" and not any(isinstance(s, Return) for s in walk(program.body))


def _ensure_calls(ch: ChoiceStream, calls: tuple[Call, ...], n: int) -> tuple[Call, ...]:
    """At least ``n`` calls: the last one again, with new values."""
    calls = tuple(calls)
    while len(calls) < n:
        calls += (dataclasses.replace(calls[-1], seed=ch.subseed()),)
    return calls


def _two_slots(ch: ChoiceStream, n: int) -> tuple[int, int]:
    """Two distinct call indices out of ``n`` >= 2."""
    a = ch.integer(0, n - 1)
    b = ch.integer(0, n - 2)
    return a, b + (b >= a)


def _new_symbol(program: Program) -> str:
    k = len(program.symbols)
    while f"s{k}" in program.symbols:
        k += 1
    return f"s{k}"


def _numel_max(scope: Scope, shape) -> int:
    return scope.max_dim(shapes.numel(shape)) if shape else 1


def _new_input_name(program: Program) -> str:
    k = len(program.inputs)
    while any(i.name == f"x{k}" for i in program.inputs):
        k += 1
    return f"x{k}"


def _broadcast_reduce(ch, scope, program, calls, sizes_of, ops, top):
    """The two size capabilities: a new symbol with ``sizes_of(ch, n_calls, dtype)`` per call (at
    most ``top(dtype)``), a new 1-D input ``xk`` of it in the dtype of a value ``v``, ``v``
    broadcast over it (``v.unsqueeze(-1) * xk``, ``+`` for integers) and one of ``ops`` over the
    result, returned."""
    v = scope.pick(lambda u: _free(u) and _numel_max(scope, u.type.shape) * top(u.type.dtype) <= scope.max_numel)
    if v is None:
        return program, calls
    dtype, kind = v.type.dtype, _kind(v.type.dtype)
    n_calls = max(len(calls), 2)
    sizes = sizes_of(ch, n_calls, dtype)
    xk_bound = 1.0 if kind == _B else min(LIMIT[dtype], 8.0 if kind == _I else 2.0)
    if kind == _I:
        bop, tmpl, bound = BCAST_OPS[1], "{0}.unsqueeze(-1) + {1}", v.bound + xk_bound
    else:
        bop, tmpl, bound = BCAST_OPS[0], "{0}.unsqueeze(-1) * {1}", v.bound * xk_bound

    def fine(op) -> bool:
        name, _t, kinds, dim, _k, bnd, out_dt = op
        if kind not in kinds or (dim == 0 and v.type.rank == 0):
            return False
        if dim == 0 and name in _NONEMPTY and scope.min_dim(v.type.shape[0]) < 1:
            return False
        n = max(sizes) if dim == -1 else scope.max_dim(v.type.shape[0])
        return scope.within(dtype, bound) and scope.within((out_dt or str)(dtype), bnd(bound, max(n, 1)))
    ok = [op for op in ops if fine(op)]
    if not ok or _numel_max(scope, v.type.shape) * max(sizes) > scope.max_numel:
        return program, calls
    name, red, _kinds, dim, keeps, _bnd, out_dt = ch.choice(ok)
    calls = _ensure_calls(ch, calls, n_calls)
    sym, xk = _new_symbol(program), _new_input_name(program)
    shape = tuple(v.type.shape) + (sym,)
    out_shape = shape if keeps else shape[:-1] if dim == -1 else shape[1:]
    prod, out = scope.fresh(), scope.fresh()
    body = program.body + (
        Assign(prod, bop, tmpl, (Ref(v.name), Ref(xk)), TensorType(shape, dtype)),
        Assign(out, name, red, (Ref(prod), Lit(dim)), TensorType(out_shape, (out_dt or str)(dtype))))
    program = dataclasses.replace(program, inputs=program.inputs + (Input(xk, TensorType((sym,), dtype)),),
                                  symbols=program.symbols + (sym,), body=body, outputs=program.outputs + (out,))
    calls = tuple(dataclasses.replace(c, sizes=c.sizes + (sizes[k],)) for k, c in enumerate(calls))
    return program, calls


# ---- the builders ----------------------------------------------------------------------------
def tail_sizes(ch: ChoiceStream, n: int, dtype: str) -> list[int]:
    """One call an odd size below the dtype's vector width, another at or above it, the rest either."""
    w = VEC_WIDTH[dtype]
    below = tuple(range(3, min(w, _ODD_CAP), 2))
    above = (w, w + 1, w + 3, w + w // 2 + 1, 2 * w - 1)
    lo, hi = _two_slots(ch, n)
    return [ch.choice(below if k == lo else above if k == hi else below + above) for k in range(n)]


def reduce_tail_remainder(ch, scope, program, calls):
    return _broadcast_reduce(ch, scope, program, calls, tail_sizes, TAIL_OPS, top=lambda d: 2 * VEC_WIDTH[d])


def edge_sizes(ch: ChoiceStream, n: int, dtype: str) -> list[int]:
    """One call 0, another 1, the rest any small size."""
    zero, one = _two_slots(ch, n)
    return [0 if k == zero else 1 if k == one else ch.choice((0, 1, 2, 3, 5, 8, 17)) for k in range(n)]


def edge_dims(ch, scope, program, calls):
    return _broadcast_reduce(ch, scope, program, calls, edge_sizes, EDGE_OPS, top=lambda d: 17)


def _signed(dtype: str) -> bool:
    return dtype in ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64")


def _writes(t: TensorType) -> list:
    """The base writes a tensor of this type takes: each keeps every element's magnitude."""
    kind = "bool" if t.dtype == "bool" else "signed" if _signed(t.dtype) else "unsigned"
    return [w for w in BASE_WRITES if t.rank >= w[2] and w[3] in (kind, "any")]


def _view_fits(scope: Scope, t: TensorType, need) -> bool:
    return need is None or (need == "nonempty0" and scope.min_dim(t.shape[0]) >= 1) or \
        (need == "rank2" and t.rank == 2)


def _view_type(template: str, t: TensorType) -> TensorType:
    sh = list(t.shape)
    if template == "{0}[1:]":
        sh[0] = shapes.add(sh[0], -1)
    elif template in ("{0}.transpose(-1, -2)", "{0}.t()"):
        sh[-1], sh[-2] = sh[-2], sh[-1]
    elif template == "{0}[..., ::2]":
        sh[-1] = shapes.ceil_div(sh[-1], 2)
    elif template == "{0}.unsqueeze(0)":
        sh.insert(0, 1)
    elif template == "{0}.narrow(0, 0, 1)":
        sh[0] = 1
    return TensorType(tuple(sh), t.dtype)


def alias_base_write_offset_view(ch, scope, program, calls):
    """Write an input in place first thing while an offset or transposed alias of it is another
    argument (an existing one, or one added), and return a view of that alias."""
    grads = {n for c in calls for n in (c.requires_grad or ())} | {i.name for i in program.inputs if i.requires_grad}
    known = {v.name for v in scope.vals if v.is_input}

    def base_ok(i: Input) -> bool:
        return i.kind == "tensor" and i.name in known and i.layout != "expanded" and i.name not in grads \
            and i.type.rank >= 1 and bool(_writes(i.type))
    aliases = [a for a in program.inputs if a.kind == "alias" and a.view in OFFSET_VIEWS
               and any(b.name == a.alias_of and base_ok(b) for b in program.inputs)]
    inputs = program.inputs
    if aliases:
        alias = ch.choice(aliases)
    else:
        bases = [b for b in program.inputs if base_ok(b)
                 and (b.type.rank >= 2 or scope.min_dim(b.type.shape[0]) >= 1)]
        if not bases:
            return program, calls
        base = ch.choice(bases)
        views = (("offset",) if scope.min_dim(base.type.shape[0]) >= 1 else ()) + \
            (("transposed",) if base.type.rank >= 2 else ())
        view = ch.choice(views)
        shape = list(base.type.shape)
        if view == "transposed":
            shape[-1], shape[-2] = shape[-2], shape[-1]
        else:
            shape[0] = shapes.add(shape[0], -1)
        alias = Input(_new_input_name(program), TensorType(tuple(shape), base.type.dtype), base.layout,
                      kind="alias", alias_of=base.name, view=view)
        inputs += (alias,)
    base = next(b for b in program.inputs if b.name == alias.alias_of)
    d = base.type.dtype
    writes = _writes(base.type)
    views = [v for v in ALIAS_VIEWS if alias.type.rank >= v[2] and _view_fits(scope, alias.type, v[3])]
    if not writes or not views:
        return program, calls
    w_op, w_tmpl, _r, _k = ch.choice(writes)
    v_op, v_tmpl, _r, _n = ch.choice(views)
    out = scope.fresh()
    body = (Mutate(base.name, w_op, w_tmpl, (Ref(base.name),)),) + program.body + \
        (Assign(out, v_op, v_tmpl, (Ref(alias.name),), _view_type(v_tmpl, alias.type)),)
    return dataclasses.replace(program, inputs=inputs, body=body, outputs=program.outputs + (out,)), calls


BUILDERS = {"reduce_tail_remainder": reduce_tail_remainder, "edge_dims": edge_dims,
            "alias_base_write_offset_view": alias_base_write_offset_view}


def apply(ch: ChoiceStream, scope: Scope, program: Program, calls: tuple[Call, ...], caps) -> tuple:
    """Run the builders of ``caps`` in order: (program, calls)."""
    if not _applies(program):
        return program, calls
    for cap in caps:
        program, calls = BUILDERS[cap](ch, scope, program, calls)
    return program, calls


# ---- features: read from the IR and the call schedule -----------------------------------------
def _types(program: Program) -> dict:
    t = {i.name: i.type for i in program.inputs if i.kind in ("tensor", "alias")}
    for s in walk_program(program):
        if hasattr(s, "out") and hasattr(s, "type"):  # Assign, CallFn, CondOp
            t[s.out] = s.type
    return t


def _reduced(s, types: dict):
    """(input type, reduced dims) of a reduction statement, or None: a reduction (or softmax) over
    one dim, its second argument a literal dim (the registry's and the edges' own), and the
    module statement's linear layer over a last-dim mean."""
    from .registry import FAMILY_OF
    if not isinstance(s, Assign) or not s.args or not isinstance(s.args[0], Ref):
        return None
    t = types.get(s.args[0].name)
    if t is None or t.rank == 0:
        return None
    if s.op == "torch.nn.functional.linear" and s.template.startswith(_LINEAR_MEAN):
        return t, (t.rank - 1,)  # the module statement's linear layer over a last-dim mean
    reduces = FAMILY_OF.get(s.op) == "reduction" or s.op in _ALSO_REDUCE
    if reduces and len(s.args) >= 2 and isinstance(s.args[1], Lit) and isinstance(s.args[1].value, int) \
            and not isinstance(s.args[1].value, bool):
        return t, (s.args[1].value % t.rank,)
    return None


def _sizes_over_calls(dim, case: Case) -> list[int] | None:
    try:
        return [shapes.dim_value(dim, dict(zip(case.program.symbols, c.sizes))) for c in case.calls]
    except (KeyError, ValueError, SyntaxError):
        return None


def _tail_remainder(t: TensorType, dims, case: Case) -> bool:
    last = t.rank - 1
    if last not in dims:
        return False
    sizes = _sizes_over_calls(t.shape[last], case)
    w = VEC_WIDTH.get(t.dtype, 16)
    return bool(sizes) and any(3 <= n < w and n % 2 for n in sizes) and any(n >= w for n in sizes)


def _edge_dim(t: TensorType, dims, case: Case) -> bool:
    """A dim of a reduction's input (reduced, or kept beside the reduced one) that is 0 in one
    call and 1 in another."""
    for d in range(t.rank):
        sizes = _sizes_over_calls(t.shape[d], case)
        if sizes and 0 in sizes and 1 in sizes:
            return True
    return False


def _alias_write_view(case: Case) -> bool:
    """An input written in place while an offset or transposed alias of it is another argument,
    and an output that is that alias or a view (``view`` family ops) of it."""
    from .registry import FAMILY_OF
    p = case.program
    aliases = {i.name: i.alias_of for i in p.inputs if i.kind == "alias" and i.view in OFFSET_VIEWS}
    written = {s.target for s in walk_program(p) if isinstance(s, Mutate)}
    aliases = {a: b for a, b in aliases.items() if b in written}
    if not aliases:
        return False
    views = set(aliases)
    for s in walk(p.body):
        if isinstance(s, Assign) and s.args and isinstance(s.args[0], Ref) and s.args[0].name in views \
                and FAMILY_OF.get(s.op) == "view":
            views.add(s.out)
    return any(o in views for o in p.outputs)


def edge_features(case: Case) -> set[str]:
    """The edge capabilities one case has (each feature bears its capability's name)."""
    f: set[str] = set()
    types = _types(case.program)
    for s in walk_program(case.program):
        r = _reduced(s, types)
        if r is None:
            continue
        if "reduce_tail_remainder" not in f and _tail_remainder(*r, case):
            f.add("reduce_tail_remainder")
        if "edge_dims" not in f and _edge_dim(r[0], r[1], case):
            f.add("edge_dims")
    if _alias_write_view(case):
        f.add("alias_base_write_offset_view")
    return f
