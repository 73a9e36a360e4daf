"""Body statements for the reach capabilities: constant subgraphs of special values, global
state changed inside the function, scalar reads and data-dependent shapes, torch.nn library
modules.

Contract: each builder takes ``(ch, scope, ctx)`` and appends statements to ``scope`` (and
module/global/output entries to ``ctx``), returning False with nothing appended when it cannot
apply. Values whose shape depends on data (nonzero, masked_select, unique) and Python numbers
returned by ``.item()`` never enter the scope: they are returned (``ctx.extra_outputs``) or reduced to a shape the IR can type first.
Library modules take an 8-feature view of one value (``x[..., None] * a + b``) and give
float32 results; their parameters and buffers are loaded by the runtime like module state.
"""
from __future__ import annotations

from .choices import ChoiceStream
from .ir import DATA_DEPENDENT, Assign, Global, Lit, Mutate, Ref, TensorType
from .scope import Scope

E = 8   # feature width of every library module
#: the values of a constant subgraph: every special class once
# the tiny value is the smallest normal, not a subnormal: GPU kernels flush subnormals to zero by
# design (and Inductor's CPU vector code may too), which maintainers do not take as a bug
CONST_VALUES = ("float('nan')", "float('inf')", "float('-inf')", "-0.0", "0.0", "3.0e38", "1.2e-38",
                "-1.5", "2.0")
CONST_OPS = ("torch.exp({0})", "torch.log({0})", "torch.sqrt({0})", "torch.reciprocal({0})",
             "torch.neg({0})", "torch.tanh({0})", "{0} * 0.0", "{0} / 0.0", "torch.sign({0})",
             "torch.atan2({0}, {0})", "torch.nan_to_num({0})", "{0} * {0}", "torch.expm1({0})",
             "torch.sigmoid({0})", "torch.copysign({0}, -0.0)", "torch.floor({0})")


def constants(ch: ChoiceStream, scope: Scope, ctx) -> bool:
    """``c = torch.tensor([nan, inf, -0.0, ...]); c = op(c)...``: a graph of pure constants
    (Inductor folds it at compile time), returned as an output."""
    dtype = ch.weighted(("float32", "float64", "float16", "bfloat16"), (4, 1, 1, 1))
    vals = list(CONST_VALUES)
    if dtype in ("float16", "bfloat16"):
        vals = [v.replace("3.0e38", "6.0e4").replace("1.2e-38", "6.2e-5" if dtype == "float16" else "1.2e-38") for v in vals]
    name = scope.fresh()
    t = TensorType((len(vals),), dtype)
    # no tensor feeds a constant: off the CPU it takes the DEVICE the runtime and repros define
    dev = "" if scope.device == "cpu" else ", device=DEVICE"
    scope.stmts.append(Assign(name, "const:tensor", f"torch.tensor([{', '.join(vals)}], dtype=torch.{dtype}{dev})",
                              (), t))
    for _ in range(ch.integer(1, 3)):
        op = ch.choice(CONST_OPS)
        nxt = scope.fresh()
        scope.stmts.append(Assign(nxt, "const:" + op.split("(")[0].strip("{}0 ").replace(" ", ""), op,
                                  (Ref(name),), t))
        name = nxt
    ctx.extra_outputs.append(name)
    return True


def global_state(ch: ChoiceStream, scope: Scope, ctx) -> bool:
    """Grad mode, deterministic algorithms, the default dtype or a rebound module global,
    changed inside the function; later statements run under the change."""
    kind = ch.weighted(("grad", "deterministic", "dtype", "rebind"), (2, 1, 2, 2))
    if kind == "grad":
        scope.stmts.append(Mutate("", "state:set_grad_enabled", "torch.set_grad_enabled(False)", ()))
        return True
    if kind == "deterministic":
        scope.stmts.append(Mutate("", "state:use_deterministic_algorithms",
                                  "torch.use_deterministic_algorithms(True)", ()))
        return True
    x = scope.pick(lambda v: v.type.dtype in ("float32", "int64", "int32", "bool") and not v.name.startswith("self."))
    if x is None:
        return False
    if kind == "dtype":
        scope.stmts.append(Mutate("", "state:set_default_dtype", "torch.set_default_dtype(torch.float64)", ()))
        # a factory without a dtype follows the new default: float64 here, float32 outside
        t = TensorType(x.type.shape, "float64")
        dev = "" if scope.device == "cpu" else ", device={0}.device"
        scope.assign("state:default_dtype_factory", "torch.zeros({0}.shape%s) + {0}" % dev, (Ref(x.name),), t,
                     x.bound)
        return True
    g = f"GR{len([q for q in ctx.rebound])}"
    ctx.rebound.append(Global(g, "rebound"))
    tmpl = ch.choice((f"global {g}; {g} = {{0}}.detach() * 2", f"global {g}; {g} = {{0}}.shape[0] + 1",
                      f"global {g}; {g} = ({{0}}.detach(), {{0}}.detach().sum())"))
    scope.stmts.append(Mutate("", "state:rebind_global", tmpl, (Ref(x.name),)))
    return True


SCALAR_KINDS = ("item_int", "item_float", "tolist", "nonzero", "masked_select", "unique", "item_out")
SCALAR_KIND_WEIGHTS = (2, 1.5, 1.5, 2, 2, 2, 1.5)


def item_out(ch: ChoiceStream, scope: Scope, ctx) -> bool:
    """An ``.item()`` returned as an output (a Python number, compared exactly): a count, or the
    max/min of exact values, or one element, so every backend must give the same number."""
    # exact values only: a comparison or a pick of rounded values may differ by backend
    a = scope.pick(lambda v: v.type.rank >= 1 and v.exact and not v.name.startswith("self.")
                   and v.type.dtype != "bool")
    if a is None:
        return False
    form = ch.choice(("count", "extreme", "element"))
    if not scope.nonempty(a.type):
        form = "count"
    if form == "count":
        t = TensorType((), "int64")
        tmpl, args = "({0} > {1}).sum().item()", (Ref(a.name), Lit(0 if not a.type.is_float else 0.25))
    elif form == "extreme":
        t = TensorType((), a.type.dtype)
        tmpl, args = f"{{0}}.{ch.choice(('amax', 'amin'))}().item()", (Ref(a.name),)
    else:
        t = TensorType((), a.type.dtype)
        tmpl, args = "{0}.reshape(-1)[-1].item()", (Ref(a.name),)
    name = scope.fresh()
    scope.stmts.append(Assign(name, "dds:item_out", tmpl, args, t))
    ctx.extra_outputs.append(name)
    return True


def scalars(ch: ChoiceStream, scope: Scope, ctx) -> bool:
    """A scalar read into Python (.item(), .tolist()) or a data-dependent shape (nonzero,
    masked_select, unique), fed onward into a typed value or returned (``item_out``)."""
    kind = ch.weighted(SCALAR_KINDS, SCALAR_KIND_WEIGHTS)
    if kind == "item_out":
        return item_out(ch, scope, ctx)
    a = None
    if kind == "tolist":  # integers: exact Python sums
        a = scope.pick(lambda v: v.type.rank >= 1 and not v.type.is_float and not v.name.startswith("self."))
        if a is None:
            kind = "item_int"
    if a is None:
        a = scope.pick(lambda v: v.type.rank >= 1 and not v.name.startswith("self."))
    b = scope.pick(lambda v: v.type.is_float and not v.name.startswith("self."))
    if a is None:
        return False
    t = Lit(0 if not a.type.is_float else ch.choice((0.25, -0.5, 1.0)))
    if kind in ("item_float", "item_int", "tolist") and b is None:
        kind = "nonzero"
    if kind == "item_int":
        return scope.assign("dds:item", "{1} * ((({0} > {2}).sum().item() % 3) + 1)",
                            (Ref(a.name), Ref(b.name), t), b.type, b.bound * 3) is not None
    if kind == "item_float":
        return scope.assign("dds:item_float", "{1} * ({0} > {2}).double().mean().item()",
                            (Ref(a.name), Ref(b.name), t), b.type, b.bound) is not None
    if kind == "tolist":
        return scope.assign("dds:tolist", "{1} + sum({0}.flatten()[:3].tolist())",
                            (Ref(a.name), Ref(b.name)), b.type, b.bound + 3 * a.bound) is not None
    tmpl = {"nonzero": "torch.nonzero({0} > {1})", "masked_select": "torch.masked_select({0}, {0} > {1})",
            # unique of NaNs is no stable contract: floats go through nan_to_num first; unique has
            # no derivative, so a float that requires grad is detached (else backward raises)
            "unique": "torch.unique(torch.nan_to_num({0}.detach()))" if a.type.is_float else "torch.unique({0})"}[kind]
    name = scope.fresh()
    dd = TensorType((DATA_DEPENDENT,) if kind != "nonzero" else (DATA_DEPENDENT, a.type.rank),
                    "int64" if kind == "nonzero" else a.type.dtype)
    scope.stmts.append(Assign(name, f"dds:{kind}", tmpl, (Ref(a.name), t) if kind != "unique" else (Ref(a.name),),
                              dd))
    ctx.extra_outputs.append(name)
    if b is not None and ch.boolean(0.7):  # its data-dependent size fed onward
        scope.assign("dds:size", "{1} * ({0}.shape[0] % 3 + 1)", (Ref(name), Ref(b.name)), b.type, b.bound * 3)
    return True


LIBRARY = {
    "mha": ("torch.nn.MultiheadAttention(8, 2, dropout=0.0, batch_first=True)", "in_proj_weight",
            "self.{a}({h}, {h}, {h}, need_weights=False)[0]"),
    "encoder": ("torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)",
                "linear1.weight", "self.{a}({h})"),
    "encoder_norm_first": ("torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, "
                           "batch_first=True, norm_first=True)", "linear1.weight", "self.{a}({h})"),
    "layer_norm": ("torch.nn.LayerNorm(8)", "weight", "self.{a}({h})"),
    "batch_norm": ("torch.nn.BatchNorm1d(8)", "weight", "self.{a}({h}.transpose(1, 2)).transpose(1, 2)"),
    "instance_norm": ("torch.nn.InstanceNorm1d(8, affine=True, track_running_stats=True)", "weight",
                      "self.{a}({h}.transpose(1, 2)).transpose(1, 2)"),
    "embedding": ("torch.nn.Embedding(10, 8)", "weight", "self.{a}({x}.to(torch.int64).abs() % 10)"),
    "embedding_bag": ("torch.nn.EmbeddingBag(10, 8, mode={mode!r})", "weight",
                      "self.{a}(({x}.to(torch.int64).abs() % 10).reshape(1, -1))"),
}
LIBRARY_WEIGHTS = (2, 1.5, 0.7, 1, 1.5, 0.7, 1, 1.2)


def library_module(ch: ChoiceStream, scope: Scope, ctx) -> bool:
    for _attempt in range(4):
        if _library_module(ch, scope, ctx, ch.weighted(tuple(LIBRARY), LIBRARY_WEIGHTS)):
            return True
    return False


def _library_module(ch: ChoiceStream, scope: Scope, ctx, kind: str) -> bool:
    ctor, wpath, call = LIBRARY[kind]
    attr = f"lib{len(ctx.library)}"
    if kind.startswith("embedding"):
        x = scope.pick(lambda v: not v.type.is_float and v.type.rank in (1, 2) and not v.name.startswith("self."))
        if x is None:
            return False
        ctor = ctor.format(mode=ch.choice(("sum", "mean", "max")))
        t = TensorType((1, E) if kind == "embedding_bag" else x.type.shape + (E,), "float32")
        expr = call.format(a=attr, x="{0}")
        if scope.assign(f"nnlib:{kind}", expr, (Ref(x.name),), t, 2.0) is None:
            return False
        ctx.library.append((attr, ctor))
        ctx.module = True
        return True
    # the rank-2 (N, L) view is batched (N, L, 8): the only form the eval fast paths take
    x = scope.pick(lambda v: v.type.rank == 2 and v.type.dtype != "bool" and not v.name.startswith("self."))
    if x is None or not scope.nonempty(x.type):
        return False
    if kind in ("batch_norm", "instance_norm") and any(scope.min_dim(d) < 2 for d in x.type.shape):
        return False  # training-mode norms need two values per channel
    w = f"self.{attr}.{wpath}.dtype"
    h = scope.fresh()
    ht = TensorType(x.type.shape + (E,), "float32")
    if scope.device != "cpu":  # the module's parameters are on the case's device
        w += f", device=self.{attr}.{wpath}.device"
    # the constants in float64, rounded once into the weight's type (eager's half-type linspace
    # rounds its step first, a decomposition does not: no compiler error either way)
    wd, dev = w.split(",")[0], "".join("," + p for p in w.split(",")[1:])
    prep = (f"{{0}}.unsqueeze(-1).to({wd}) * torch.linspace(0.5, 1.5, 8, dtype=torch.float64{dev}).to({wd}) "
            f"+ torch.linspace(-1.0, 1.0, 8, dtype=torch.float64{dev}).to({wd})")
    bound = 1.5 * min(x.bound, 1e3) + 1.0
    if scope.assign("nnlib:features", prep, (Ref(x.name),), ht, bound, name=h) is None:
        return False
    if scope.assign(f"nnlib:{kind}", call.format(a=attr, h="{0}"), (Ref(h),), ht, 50.0) is None:
        return False
    ctx.library.append((attr, ctor))
    ctx.module = True
    return True


def caller_matmul(ch: ChoiceStream, scope: Scope, ctx) -> bool:
    """A product the caller's autocast changes (CPU autocast lowers matmul to bfloat16)."""
    x = scope.pick(lambda v: v.type.dtype == "float32" and v.type.rank >= 2 and not v.name.startswith("self."))
    if x is None:
        return False
    t = TensorType(x.type.shape[:-1] + (x.type.shape[-2],), "float32")
    return scope.assign("autocast:caller_matmul", "torch.tanh(torch.matmul({0}, {0}.transpose(-1, -2)))",
                        (Ref(x.name),), t, 1.0) is not None


BUILDERS = {"caller": caller_matmul, "constants": constants, "gstate": global_state, "scalars": scalars, "nnlib": library_module}
