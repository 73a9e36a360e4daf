"""Program structure: control flow, helpers, modules, globals, scalars, containers, aliases.

Contract: the builders here extend a ``StructScope`` (a ``Scope`` that records
which storage roots are mutated and can forbid mutation inside loop bodies)
with one structural statement each, drawing every decision from the scope's
choice stream and returning False (scope unchanged) when they cannot apply.
Values made inside a block stay inside it; only declared joins/carried names
and call results escape, with their static types and magnitude bounds kept
sound: loop bodies never mutate and their carried updates are contractions,
so any number of iterations keeps the declared bound. ``Context`` gathers what
ends up outside the body (helpers, module state, globals, scalar arguments).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable

import torch

from .choices import ChoiceStream
from .ir import (Assign, CallFn, CondOp, DataCond, Function, Global, If, Loop, ModuleDef, Mutate,
                 Program, Ref, Return, ScalarCond, SizeCond, StateTensor, TensorType, While, With,
                 tainted_sources, walk)
from .scope import Scope, Val

BRANCH_OPS = ("torch.sin({0})", "torch.tanh({0})", "torch.relu({0})", "torch.neg({0})",
              "torch.sigmoid({0})", "{0}.clone()", "torch.abs({0})")
COND_OPS = ("torch.sin({0})", "torch.tanh({0})", "torch.sigmoid({0})", "{0} * 0.5", "torch.cos({0})")
HAS_COND = hasattr(torch, "cond")   # torch.cond is only drawn where this torch has it
INT_SCALARS = (0, 1, 2, 3)
FLOAT_SCALARS = (0.5, -0.75, 1.5, 2.0, -1.25, 0.25)
CARRY = "{0} * 0.5 + torch.tanh({1}) * 0.5"   # a contraction: |c| <= max(|c0|, 1) forever
CARRY_INDEX = "{0} * 0.5 + torch.tanh({1} + {2}) * 0.5"
#: share of the nested autocast(enabled=False) regions (of a float32 value) that compute in full
#: precision again: a ``.float()`` of the bfloat16 product, and a float32 matmul of float32 values
OFF_FULL_P = 0.6


class StructScope(Scope):
    """A Scope that records mutated storage roots; ``readonly`` forbids mutation."""

    def __init__(self, ch, counter, parent=None, sizes=None, max_numel=1 << 14, mutated=None,
                 readonly=False):
        super().__init__(ch, counter, parent=parent, sizes=sizes, max_numel=max_numel)
        self.mutated: set[str] = mutated if mutated is not None else set()
        self.readonly = readonly

    def mutate(self, op, template, args, target, new_bound, **flags):
        if self.readonly:
            return False
        ok = super().mutate(op, template, args, target, new_bound, **flags)
        if ok:
            self.mutated.add(target.root)
        return ok

    def child(self, readonly: bool = False) -> "StructScope":
        return StructScope(self.ch, self._counter, parent=self, mutated=self.mutated,
                           readonly=readonly or self.readonly)


@dataclass
class Helper:
    fn: Function
    types: tuple[TensorType, ...]
    bounds: tuple[float, ...]
    result: TensorType
    result_bound: float


@dataclass
class Context:
    """What the structure builders accumulate outside the body."""
    one_stmt: Callable[[ChoiceStream, Scope], None]
    symbols: tuple[str, ...]
    out_kind: str = "tuple"
    scalars: list[tuple[str, str]] = field(default_factory=list)     # (name, int|float)
    globals: list[Global] = field(default_factory=list)
    helpers: list[Helper] = field(default_factory=list)
    cond_fns: list[Function] = field(default_factory=list)
    module: bool = False
    state: list[StateTensor] = field(default_factory=list)
    subs: list[tuple[str, ModuleDef, Helper]] = field(default_factory=list)
    linear: tuple[str, str, int] | None = None
    container: tuple[str, str, TensorType] | None = None               # (input name, kind, element type)
    library: list[tuple[str, str]] = field(default_factory=list)       # torch.nn modules: (attr, ctor)
    rebound: list[Global] = field(default_factory=list)                # globals rebound inside the body
    kind_weights: tuple = ()                                           # per KINDS; () = WEIGHTS
    extra_outputs: list[str] = field(default_factory=list)             # returned besides the drawn outputs

    def int_names(self) -> list[str]:
        return [n for n, k in self.scalars if k == "int"] + [g.name for g in self.globals if g.kind == "int"]

    def float_names(self) -> list[str]:
        return [n for n, k in self.scalars if k == "float"] + [g.name for g in self.globals if g.kind == "float"]


# ---- extra inputs, globals and module state ---------------------------------------
def size_cond(ch: ChoiceStream, scope: Scope) -> SizeCond | None:
    # plain symbols only (an input aliasing another at an offset has a dim like "(s0)+(-1)")
    cands = [v for v in scope.all_vals() if v.is_input and any(d in scope.sizes for d in v.type.shape)
             and "[" not in v.name]
    if not cands:
        return None
    x = ch.choice(cands)
    dim = ch.choice([i for i, d in enumerate(x.type.shape) if d in scope.sizes])
    seen = sorted(set(scope.sizes[x.type.shape[dim]]))
    # Split the schedule's values across the two branches where it can.
    value = seen[ch.integer(0, len(seen) - 2)] if len(seen) > 1 else max(seen[0] - ch.integer(0, 1), 0)
    return SizeCond(x.name, dim, value)


def data_cond(ch: ChoiceStream, scope: StructScope, kinds=("any", "item")) -> DataCond | None:
    """A condition on exact data: an input (or global) nobody has written to yet."""
    cands = [v for v in scope.all_vals() if (v.is_input or v.name.startswith("G"))
             and v.root not in scope.mutated and v.type.dtype != "bool"]
    if not cands:
        return None
    x = ch.choice(cands)
    value = ch.choice((0.25, -0.5, 1.0)) if x.type.is_float else ch.choice((0, 2))
    return DataCond(x.name, ch.choice(kinds), value)


def scalar_cond(ch: ChoiceStream, ctx: Context) -> ScalarCond | None:
    names = ctx.int_names()
    return ScalarCond(ch.choice(names), ch.integer(0, 2)) if names else None


# ---- blocks --------------------------------------------------------------------------
def if_block(ch: ChoiceStream, scope: StructScope, ctx: Context, cond) -> bool:
    if cond is None:
        return False
    joined = scope.pick(lambda v: v.type.is_float)
    if joined is None:
        return False
    join_name = scope.fresh()
    branches = []
    for _ in range(2):
        child = scope.child()
        for _k in range(ch.integer(0, 2)):
            ctx.one_stmt(ch, child)
        src = child.pick(lambda v: v.type == joined.type and v.bound <= joined.bound) or joined
        template = ch.choice(BRANCH_OPS)
        child.assign("branch:" + template.split("(")[0], template, (Ref(src.name),), joined.type,
                     joined.bound, name=join_name)
        branches.append(tuple(child.stmts))
    scope.stmts.append(If(cond, branches[0], branches[1], ((join_name, joined.type),)))
    scope.vals.append(Val(join_name, joined.type, joined.bound, root=join_name))
    return True


def _carried(scope: StructScope) -> tuple[Val, Val] | None:
    """(initial value, carried value) for a loop: ``c = init.clone()`` before the loop."""
    init = scope.pick(lambda v: v.type.is_float)
    if init is None:
        return None
    bound = max(init.bound, 1.0)
    c = scope.assign("loop:init", "{0}.clone()", (Ref(init.name),), init.type, bound)
    return (init, c) if c is not None else None


def _loop_body(ch: ChoiceStream, scope: StructScope, ctx: Context, c: Val, index: Val | None,
               index_int: str | None = None):
    child = scope.child(readonly=True)
    if index is not None:
        child.vals.append(index)
    for _k in range(ch.integer(0, 2)):
        ctx.one_stmt(ch, child)
    src = child.pick(lambda v: v.type == c.type) or c
    if index_int is not None and ch.boolean(0.4):  # the Python loop index feeds the update
        child.stmts.append(Assign(c.name, "loop:carry_index", CARRY_INDEX,
                                  (Ref(c.name), Ref(src.name), Ref(index_int)), c.type))
    else:
        child.stmts.append(Assign(c.name, "loop:carry", CARRY, (Ref(c.name), Ref(src.name)), c.type))
    return tuple(child.stmts)


def loop_block(ch: ChoiceStream, scope: StructScope, ctx: Context) -> bool:
    kinds = ["range", "tuple"] + (["iter"] if ctx.container else [])
    kind = ch.choice(kinds)
    index_name = scope.fresh()
    index_val, items, count = None, (), 0
    if kind == "range":
        ints = ctx.int_names()
        count = ch.choice(ints) if ints and ch.boolean(0.4) else ch.integer(1, 3)
    elif kind == "tuple":
        first = scope.pick(lambda v: v.type.rank >= 0)
        same = [v for v in scope.all_vals() if v.type == first.type]
        picked = [first] + [ch.choice(same) for _ in range(ch.integer(0, 2))]
        items = tuple(v.name for v in picked)
        index_val = Val(index_name, first.type, max(v.bound for v in picked), index_name, False)
    else:
        name, ckind, t = ctx.container
        items = (name,)
        kind = "dict" if ckind == "dict" else "iter"
        index_val = Val(index_name, t, 2.0, index_name, False)
    pair = _carried(scope)
    if pair is None:
        return False
    _init, c = pair
    body = _loop_body(ch, scope, ctx, c, index_val, index_name if kind == "range" else None)
    scope.stmts.append(Loop(index_name, kind, count, items, body, ((c.name, c.type),),
                            index_val.type if index_val is not None else None))
    return True


def while_block(ch: ChoiceStream, scope: StructScope, ctx: Context) -> bool:
    cands = [v for v in scope.all_vals() if v.is_input and "[" not in v.name
             and any(isinstance(d, str) for d in v.type.shape)]
    if not cands:
        return False
    x = ch.choice(cands)
    dim = ch.choice([i for i, d in enumerate(x.type.shape) if isinstance(d, str)])
    pair = _carried(scope)
    if pair is None:
        return False
    _init, c = pair
    body = _loop_body(ch, scope, ctx, c, None)
    scope.stmts.append(While(scope.fresh(), x.name, dim, body, ((c.name, c.type),)))
    return True


def early_return(ch: ChoiceStream, scope: StructScope, ctx: Context) -> bool:
    made = [v for v in scope.vals if not v.is_input and not v.name.startswith(("self.", "G"))]
    if not made or scope.parent is not None:
        return False
    cond = scalar_cond(ch, ctx) if ctx.int_names() and ch.boolean(0.4) else size_cond(ch, scope)
    if cond is None:
        return False
    picked = [made[-1]] + ([ch.choice(made)] if ch.boolean(0.5) else [])
    names = tuple(dict.fromkeys(v.name for v in picked))
    if ctx.out_kind == "single":
        names = names[:1]
    scope.stmts.append(If(cond, (Return(names),), (), ()))
    return True


def autocast_block(ch: ChoiceStream, scope: StructScope, ctx: Context) -> bool:
    x = scope.pick(lambda v: v.type.dtype in ("float32", "bfloat16") and v.type.rank >= 2)
    if x is None:
        return False
    sq = TensorType(x.type.shape[:-1] + (x.type.shape[-2],), "bfloat16")
    if not scope.fits(sq):
        return False
    a, b, j = scope.fresh(), scope.fresh(), scope.fresh()
    body = [Assign(a, "autocast:matmul", "torch.tanh(torch.matmul({0}, {0}.transpose(-1, -2)))",
                   (Ref(x.name),), sq)]
    full = None
    if ch.boolean(0.5):  # a nested region that switches autocast off again
        off = [Assign(b, "autocast:off_matmul", "torch.tanh(torch.matmul({0}.to({1}.dtype), {1}))",
                      (Ref(a), Ref(x.name)), x.type)]
        # drawn behind the nested region's own draw (only programs that have one change), in the
        # function's own body: the full-precision value is returned, so it must be defined there
        if x.type.dtype == "float32" and scope.parent is None and ch.boolean(OFF_FULL_P):
            full = scope.fresh()
            # both operands .float(): the fp64 run keeps the region's values float64, and
            # mixing a float32 operand with a float64 one would fail there
            off = [Assign(b, "autocast:off_float", "torch.tanh(torch.matmul({0}.float(), {1}.float()))",
                          (Ref(a), Ref(x.name)), x.type),
                   Assign(full, "autocast:off_full", "torch.tanh(torch.matmul({0}, {0}.transpose(-1, -2)))",
                          (Ref(x.name),), TensorType(sq.shape, "float32"))]
        body.append(With("no_autocast", tuple(off)))
    else:
        body.append(Assign(b, "autocast:matmul", "torch.tanh(torch.matmul({0}, {1}))",
                           (Ref(a), Ref(x.name)), TensorType(x.type.shape, "bfloat16")))
    scope.stmts.append(With("autocast", tuple(body)))
    if full is not None:
        # full precision from full-precision values only: returned, so its own (float32) floor
        # judges it; the join below passed through bfloat16 and keeps the coarse one
        scope.vals.append(Val(full, TensorType(sq.shape, "float32"), 1.0, full))
        ctx.extra_outputs.append(full)
    scope.assign("autocast:join", "{0}.to({1}.dtype)", (Ref(b), Ref(x.name)), x.type, 1.0, name=j)
    return True


def _build_function(ch: ChoiceStream, scope: StructScope, ctx: Context, args: list[Val], name: str,
                    extra_vals=(), pure: bool = False) -> Helper:
    """A helper body over read-only parameters; it ends in a fresh (non-view) tensor.
    ``pure``: no random op and no in-place write in the body."""
    hs = StructScope(ch, scope._counter, sizes=scope.sizes, max_numel=scope.max_numel, readonly=pure)
    hs.int_matmul = scope.int_matmul
    if pure:
        hs.flags["random"] = 1  # the random ops draw only while no other one was drawn
    params = []
    for a in args:
        pn = hs.fresh()
        params.append((pn, a.type))
        hs.vals.append(Val(pn, a.type, a.bound, pn, writable=False))
    hs.vals.extend(extra_vals)
    for _k in range(ch.integer(1, 3)):
        ctx.one_stmt(ch, hs)
    src = hs.pick(lambda v: v.type.is_float and not v.name.startswith("self.")) or \
        hs.pick(lambda v: not v.name.startswith("self."))
    template = ch.choice(BRANCH_OPS) if src.type.is_float else "{0}.clone()"
    if src.type.is_float and extra_vals:
        template = "torch.tanh({0}) * {1}"
        res = hs.assign("sub:out", template, (Ref(src.name), Ref(extra_vals[0].name)), src.type, 2.0)
    else:
        res = hs.assign("helper:out:" + template.split("(")[0], template, (Ref(src.name),), src.type,
                        src.bound)
    if res is None:
        res = src
    fn = Function(name, tuple(params), tuple(hs.stmts), res.name)
    return Helper(fn, tuple(a.type for a in args), tuple(a.bound for a in args), res.type, res.bound)


def helper_call(ch: ChoiceStream, scope: StructScope, ctx: Context) -> bool:
    for h in ctx.helpers:  # call an existing helper again when arguments fit
        args = [scope.pick(lambda v, t=t, b=b: v.type == t and v.bound <= b) for t, b in zip(h.types, h.bounds)]
        if all(a is not None for a in args) and ch.boolean(0.6):
            break
    else:
        first = scope.pick(lambda v: not v.name.startswith("self."))
        if first is None:
            return False
        args = [first] + ([scope.pick(lambda v: not v.name.startswith("self."))] if ch.boolean(0.4) else [])
        h = _build_function(ch, scope, ctx, args, f"h{len(ctx.helpers)}")
        ctx.helpers.append(h)
    return _emit_call(scope, h.fn.name, h, args)


def _emit_call(scope: StructScope, fn_name: str, h: Helper, args: list[Val]) -> bool:
    if not scope.fits(h.result) or not scope.within(h.result.dtype, h.result_bound):
        return False
    out = scope.fresh()
    scope.stmts.append(CallFn(out, fn_name, tuple(Ref(a.name) for a in args), h.result))
    # a helper may return a view of an argument: never a write target when an argument is not
    # (an expanded input's elements overlap, and writing into them is a user error)
    scope.vals.append(Val(out, h.result, h.result_bound, out, writable=all(a.writable for a in args)))
    return True


def submodule_call(ch: ChoiceStream, scope: StructScope, ctx: Context) -> bool:
    if not ctx.module:
        return False
    if ctx.subs:
        attr, _m, h = ctx.subs[0]
        x = scope.pick(lambda v: v.type == h.types[0] and v.bound <= h.bounds[0])
        return x is not None and _emit_call(scope, f"self.{attr}", h, [x])
    x = scope.pick(lambda v: v.type.is_float and not v.name.startswith("self."))
    if x is None:
        return False
    p = Val("self.p", TensorType((), "float32"), 2.0, "self.p", writable=False)
    h = _build_function(ch, scope, ctx, [x], "forward", extra_vals=(p,))
    m = ModuleDef("Sub0", (StateTensor("p", p.type, "param"),), (), h.fn)
    ctx.subs.append(("sub0", m, h))
    return _emit_call(scope, "self.sub0", h, [x])


def cond_op(ch: ChoiceStream, scope: StructScope, ctx: Context) -> bool:
    """``torch.cond`` with a size or data predicate and two small pointwise branches."""
    if not HAS_COND:
        return False
    first = scope.pick(lambda v: v.type.is_float and not v.name.startswith("self."))
    if first is None:
        return False
    # operands never share storage (the same value twice, or a view and its base): torch.cond
    # rejects aliased operands under grad mode by design (#153832), and eager takes a branch
    # without that check only while the predicate is a plain bool
    ops = [first] + ([scope.pick(lambda v: v.type == first.type and not v.name.startswith("self.")
                                 and v.root != first.root)]
                     if ch.boolean(0.5) else [])
    if None in ops:
        ops = [first]
    pred = data_cond(ch, scope, kinds=("any",)) if ch.boolean(0.5) else size_cond(ch, scope)
    if pred is None:
        return False
    names = []
    for side in ("true", "false"):
        params = tuple((scope.fresh(), first.type) for _ in ops)
        cur = params[0][0]
        body = []
        for _k in range(ch.integer(1, 2)):
            out = scope.fresh()
            if len(params) == 2 and ch.boolean(0.4):
                body.append(Assign(out, "cond:mix", "{0} * 0.5 + {1} * 0.5", (Ref(cur), Ref(params[1][0])),
                                   first.type))
            else:
                t = ch.choice(COND_OPS)
                body.append(Assign(out, "cond:" + t.split("(")[0], t, (Ref(cur),), first.type))
            cur = out
        name = f"cond_{side}{len(ctx.cond_fns) // 2}"
        ctx.cond_fns.append(Function(name, params, tuple(body), cur))
        names.append(name)
    out = scope.fresh()
    scope.stmts.append(CondOp(out, pred, names[0], names[1], tuple(v.name for v in ops), first.type))
    scope.vals.append(Val(out, first.type, max(v.bound for v in ops) + 1.0, out))
    return True


def scalar_use(ch: ChoiceStream, scope: StructScope, ctx: Context) -> bool:
    ints, floats = ctx.int_names(), ctx.float_names()
    if floats and (not ints or ch.boolean()):
        x = scope.pick(lambda v: v.type.is_float)
        f = ch.choice(floats)
        return x is not None and scope.assign("scalar:mul", "{0} * {1}", (Ref(x.name), Ref(f)), x.type,
                                              x.bound * 2.0) is not None
    if ints:
        x = scope.pick(lambda v: v.type.dtype not in ("bool",))
        n = ch.choice(ints)
        return x is not None and scope.assign("scalar:add", "{0} + {1}", (Ref(x.name), Ref(n)), x.type,
                                              x.bound + 3) is not None
    return False


def module_stmt(ch: ChoiceStream, scope: StructScope, ctx: Context) -> bool:
    """A running-statistics buffer update, or a linear layer over the module's parameters."""
    if not ctx.module:
        return False
    buf = next((v for v in scope.all_vals() if v.name == "self.buf0"), None)
    if buf is not None and ch.boolean(0.5):
        x = scope.pick(lambda v: v.type.is_float and not v.name.startswith("self."))
        return x is not None and scope.mutate(
            "buffer:running_mean", "{0}.mul_(0.9).add_({1}.detach().mean() * 0.1)",
            (Ref(buf.name), Ref(x.name)), buf, max(buf.bound, x.bound))
    if ctx.linear is not None:
        w, b, k = ctx.linear
        x = scope.pick(lambda v: v.type.dtype == "float32" and v.type.rank >= 1
                       and not v.name.startswith("self."))
        if x is None:
            return False
        t = TensorType(x.type.shape[:-1] + (k,), "float32")
        return scope.assign("torch.nn.functional.linear",
                            "torch.nn.functional.linear({0}.mean(-1, keepdim=True), {1}, {2})",
                            (Ref(x.name), Ref(w), Ref(b)), t, 2.0 * x.bound + 2.0) is not None
    return False


KINDS = ("if_size", "if_data", "if_scalar", "loop", "while", "cond", "helper", "submodule",
         "autocast", "early_return", "scalar", "module")
WEIGHTS = (1.0, 0.8, 0.5, 1.2, 0.6, 0.35, 0.8, 0.8, 0.5, 0.4, 0.8, 1.0)


def kind_weights(scale=()) -> tuple:
    """WEIGHTS with each (kind, factor) of ``scale`` applied (GenConfig.kind_scale)."""
    f = dict(scale)
    unknown = set(f) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown structure kind(s) {sorted(unknown)}; known: {', '.join(KINDS)}")
    return tuple(w * f.get(k, 1.0) for k, w in zip(KINDS, WEIGHTS))


def structure_stmt(ch: ChoiceStream, scope: StructScope, ctx: Context) -> None:
    kind = ch.weighted(KINDS, ctx.kind_weights or WEIGHTS)
    ok = False
    if kind == "if_size":
        ok = if_block(ch, scope, ctx, size_cond(ch, scope))
    elif kind == "if_data":
        ok = if_block(ch, scope, ctx, data_cond(ch, scope))
    elif kind == "if_scalar":
        ok = if_block(ch, scope, ctx, scalar_cond(ch, ctx))
    elif kind == "loop":
        ok = loop_block(ch, scope, ctx)
    elif kind == "while":
        ok = while_block(ch, scope, ctx)
    elif kind == "cond":
        ok = cond_op(ch, scope, ctx)
    elif kind == "helper":
        ok = helper_call(ch, scope, ctx)
    elif kind == "submodule":
        ok = submodule_call(ch, scope, ctx)
    elif kind == "autocast":
        ok = autocast_block(ch, scope, ctx)
    elif kind == "early_return":
        ok = early_return(ch, scope, ctx)
    elif kind == "scalar":
        ok = scalar_use(ch, scope, ctx)
    elif kind == "module":
        ok = module_stmt(ch, scope, ctx)
    if not ok:
        ctx.one_stmt(ch, scope)


def module_def(ctx: Context, body) -> ModuleDef | None:
    """The top module; parameters whose values reach an in-place write are frozen."""
    if not ctx.module:
        return None
    probe = Program((), tuple(body), (), (), helpers=tuple(h.fn for h in ctx.helpers),
                    module=ModuleDef("Model", (), tuple((a, m) for a, m, _h in ctx.subs)))
    tainted = tainted_sources(probe)
    state = tuple(dataclasses.replace(st, requires_grad=f"self.{st.name}" not in tainted)
                  if st.kind == "param" else st for st in ctx.state)
    subs = []
    for attr, m, _h in ctx.subs:
        writes = any(isinstance(s, Mutate) for s in walk(m.forward.body))
        if writes:
            m = dataclasses.replace(m, state=tuple(dataclasses.replace(st, requires_grad=False)
                                                   for st in m.state))
        subs.append((attr, m))
    return ModuleDef("Model", state, tuple(subs), None, library=tuple(ctx.library))
