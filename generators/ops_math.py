"""Reductions, sort/topk (values only), matmul family, nn.functional layers, casts, creation.

Contract: tables of specs. Weights of linear/conv/embedding layers are built
inside the program from creation ops in the input's own dtype (``dtype=x.dtype``),
so the fp64 reference run stays type-consistent. Random ops (dropout,
rand_like) always draw in float32, whatever the input dtype, so the fp64
reference run draws the very same numbers; at most one random op per program
keeps the RNG order free of any scheduling choice. Indices (argmax, sort
indices) are never produced.
"""
from __future__ import annotations

import math

from . import shapes
from .ir import Lit, Ref, TensorType
from .ops import DT, Reduce, Spec, acc_out, exact_of, max_size
from .scope import Val

F = "torch.nn.functional."
ident = lambda d: d
to_bool = lambda d: "bool"
to_i64 = lambda d: "int64"
sum_b = lambda b, n: b * max(n, 1)


def pow_b(b, n):
    """Bound of a product of n values bounded by b (inf once it leaves float range)."""
    try:
        return max(b, 1.0) ** max(n, 1)
    except OverflowError:
        return float("inf")


REDUCE = (
    Reduce("torch.sum", "{0}.sum({1}, keepdim={2})", dtypes="numb", bound=sum_b, out_dtype=acc_out,
           full="{0}.sum()", weight=1.5),
    Reduce("torch.nansum", "torch.nansum({0}, {1}, keepdim={2})", dtypes="float", bound=sum_b, weight=0.3),
    Reduce("torch.mean", "{0}.mean({1}, keepdim={2})", dtypes="float", full="{0}.mean()", min_n=1),
    Reduce("torch.amax", "{0}.amax({1}, keepdim={2})", min_n=1, keeps_exact=True, full="torch.amax({0})"),
    Reduce("torch.amin", "{0}.amin({1}, keepdim={2})", min_n=1, keeps_exact=True),
    Reduce("Tensor.max", "{0}.max({1}, keepdim={2}).values", min_n=1, keeps_exact=True, full="{0}.max()",
           weight=0.5),
    Reduce("Tensor.min", "{0}.min({1}, keepdim={2}).values", min_n=1, keeps_exact=True, weight=0.4),
    Reduce("torch.median", "torch.median({0}, {1}, keepdim={2}).values", min_n=1, keeps_exact=True,
           dtypes="num", weight=0.3),
    Reduce("torch.prod", "{0}.prod({1}, keepdim={2})", dtypes="num", bound=pow_b, out_dtype=acc_out, weight=0.5),
    Reduce("torch.var", "torch.var({0}, {1}, keepdim={2})", dtypes="float", bound=lambda b, n: 4 * b * b,
           min_n=2, weight=0.5),
    Reduce("torch.std", "torch.std({0}, {1}, keepdim={2})", dtypes="float", bound=lambda b, n: 2 * b, min_n=2,
           weight=0.5),
    Reduce("torch.var_mean", "torch.var_mean({0}, {1}, correction=0, keepdim={2})[0]", dtypes="float",
           bound=lambda b, n: 4 * b * b, min_n=1, weight=0.2),
    Reduce("torch.logsumexp", "torch.logsumexp({0}, {1}, keepdim={2})", dtypes="float",
           bound=lambda b, n: b + math.log(max(n, 1)) + 1, min_n=1),
    Reduce("torch.norm", "torch.norm({0}, dim={1}, keepdim={2})", dtypes="float", bound=sum_b, weight=0.4),
    Reduce("torch.linalg.vector_norm", "torch.linalg.vector_norm({0}, 1, dim={1}, keepdim={2})",
           dtypes="float", bound=sum_b, weight=0.3),
    Reduce("torch.any", "{0}.any({1}, keepdim={2})", dtypes="bool", bound=lambda b, n: 1.0, out_dtype=to_bool,
           full="{0}.any()", weight=0.4),
    # all/any on floats test x != 0, a step: integer and bool inputs only
    Reduce("torch.all", "torch.all({0}, {1}, keepdim={2})", dtypes="sintb", bound=lambda b, n: 1.0,
           out_dtype=to_bool, weight=0.3),
    Reduce("torch.cumsum", "torch.cumsum({0}, {1})", keeps_dim=True, dtypes="num", bound=sum_b,
           out_dtype=acc_out),
    Reduce("torch.cumprod", "torch.cumprod({0}, {1})", keeps_dim=True, dtypes="num", bound=pow_b,
           out_dtype=acc_out, weight=0.4),
    Reduce("torch.logcumsumexp", "torch.logcumsumexp({0}, {1})", keeps_dim=True, dtypes="f32up",
           bound=lambda b, n: b + math.log(max(n, 1)) + 1, weight=0.3),
    Reduce("torch.cummax", "torch.cummax({0}, {1}).values", keeps_dim=True, dtypes="num", keeps_exact=True,
           weight=0.3),
    Reduce("torch.cummin", "torch.cummin({0}, {1}).values", keeps_dim=True, dtypes="num", keeps_exact=True,
           weight=0.2),
    Reduce("torch.sort", "torch.sort({0}, {1}).values", keeps_dim=True, dtypes="num", keeps_exact=True,
           family="sort", weight=0.5),
    Reduce("torch.msort", "torch.msort({0}.transpose(0, {1})).transpose(0, {1})", keeps_dim=True,
           dtypes="num", keeps_exact=True, family="sort", weight=0.1),
)


def count_nonzero(s, spec):
    x = s.pick(lambda v: v.type.dtype in DT["num"] and v.type.rank >= 1 and v.exact)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    n = max_size(s, x.type.shape[d])
    return s.assign(spec.name, "torch.count_nonzero({0}, {1})", (Ref(x.name), Lit(d)),
                    TensorType(x.type.shape[:d] + x.type.shape[d + 1:], "int64"), n) is not None


REDUCE = REDUCE + (Spec("torch.count_nonzero", "reduction", count_nonzero, 0.2),)


def topk(s, spec):
    x = s.pick(lambda v: v.type.rank >= 1 and v.type.dtype in DT["num"])
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    lo = s.min_dim(x.type.shape[d])
    if lo < 1:
        return False
    k = s.ch.integer(1, min(lo, 4))
    shape = x.type.shape[:d] + (k,) + x.type.shape[d + 1:]
    if spec.name == "torch.topk":
        tmpl = "torch.topk({0}, %d, %d, largest=%s).values" % (k, d, s.ch.boolean())
    else:  # kthvalue drops the dim
        tmpl = "torch.kthvalue({0}, %d, %d).values" % (k, d)
        shape = x.type.shape[:d] + x.type.shape[d + 1:]
    return s.assign(spec.name, tmpl, (Ref(x.name),), TensorType(shape, x.type.dtype), x.bound,
                    exact=exact_of(x.type.dtype, True, x)) is not None


# ---- matmul family ------------------------------------------------------------------
def _mm_float(v: Val) -> bool:
    return v.type.dtype in ("float32", "float64", "bfloat16")


_MM_INTS = ("int64", "int32", "int16", "int8", "uint8")


def _mm_operand(s, name: str):
    """Float operands always; integer ones too where the scope allows (CPU) and the op takes no
    float scaling (addmm/baddbmm pass alpha=0.5, mv/dot-like stay float)."""
    ints = s.int_matmul and name in ("torch.matmul", "Tensor.__matmul__", "torch.mm", "torch.bmm",
                                     "torch.einsum")
    return lambda v: _mm_float(v) or (ints and v.type.dtype in _MM_INTS)


def _weight(n_expr: str, shape_expr: str) -> str:
    """A deterministic weight in x's dtype: linspace over [-0.5, 0.5] reshaped."""
    return f"torch.linspace(-0.5, 0.5, {n_expr}, dtype=torch.float64, device={{0}}.device).to({{0}}.dtype).reshape({shape_expr})"


def matmul(s, spec):
    name = spec.name
    ok = _mm_operand(s, name)
    if name in ("torch.matmul", "Tensor.__matmul__", "torch.einsum"):
        x = s.pick(lambda v: ok(v) and v.type.rank >= 2)
    elif name in ("torch.mm", "torch.addmm"):
        x = s.pick(lambda v: ok(v) and v.type.rank == 2)
    elif name in ("torch.bmm", "torch.baddbmm"):
        x = s.pick(lambda v: ok(v) and v.type.rank == 3)
    else:  # mv, outer, dot-like
        x = s.pick(lambda v: _mm_float(v) and v.type.rank == 1)
        if name == "torch.mv":
            x = s.pick(lambda v: _mm_float(v) and v.type.rank == 2)
    if x is None:
        return False
    sh = x.type.shape
    k = max_size(s, sh[-1])
    b2 = x.bound * x.bound * max(k, 1)
    # second operand: another value of the right shape (cast to x's dtype), or x itself
    o = s.pick(lambda v: v.type.shape == sh and v is not x and v.type.dtype in DT["num"])
    other = "{1}.to({0}.dtype)" if o is not None else "{0}"
    args = (Ref(x.name),) + ((Ref(o.name),) if o is not None else ())
    ob = o.bound if o is not None else x.bound
    bound = x.bound * ob * max(k, 1)
    if name in ("torch.matmul", "Tensor.__matmul__", "torch.mm", "torch.bmm"):
        tmpl = {"torch.matmul": "torch.matmul({0}, %s.transpose(-1, -2))",
                "Tensor.__matmul__": "{0} @ %s.transpose(-1, -2)", "torch.mm": "torch.mm({0}, %s.t())",
                "torch.bmm": "torch.bmm({0}, %s.transpose(1, 2))"}[name] % other
        shape = sh[:-1] + (sh[-2],)
    elif name == "torch.einsum":
        tmpl = "torch.einsum('...ij,...kj->...ik', {0}, %s)" % other
        shape = sh[:-1] + (sh[-2],)
    elif name == "torch.addmm":
        tmpl = "torch.addmm({0}, {0}, %s.t(), beta=0.5, alpha=0.5)" % other
        shape, bound = sh, x.bound + bound
        if sh[0] != sh[1]:
            return False
    elif name == "torch.baddbmm":
        tmpl = "torch.baddbmm({0}, {0}, %s.transpose(1, 2), alpha=0.5)" % other
        shape, bound = sh, x.bound + bound
        if sh[1] != sh[2]:
            return False
    elif name == "torch.mv":
        tmpl = "torch.mv({0}, %s[0])" % other
        if s.min_dim(sh[0]) < 1:
            return False
        shape = sh[:1]
    elif name == "torch.outer":
        tmpl = "torch.outer({0}, %s)" % other
        shape, bound = (sh[0], sh[0]), x.bound * ob
    else:  # tensordot over the last dim of both
        tmpl = "torch.tensordot({0}, %s, dims=([0], [0]))" % other
        shape = ()
    return s.assign(name, tmpl, args, TensorType(shape, x.type.dtype), bound) is not None


def linear(s, spec):
    x = s.pick(lambda v: _mm_float(v) and v.type.rank >= 1)
    if x is None:
        return False
    out = s.ch.choice((1, 3, 8, 17))
    k = max_size(s, x.type.shape[-1])
    w = _weight(f"{out} * {{0}}.shape[-1]", f"{out}, {{0}}.shape[-1]")
    bias = f", torch.linspace(-1, 1, {out}, dtype=torch.float64, device={{0}}.device).to({{0}}.dtype)" if s.ch.boolean() else ""
    return s.assign(spec.name, f"{F}linear({{0}}, {w}{bias})", (Ref(x.name),),
                    TensorType(x.type.shape[:-1] + (out,), x.type.dtype), x.bound * 0.5 * max(k, 1) + 1) is not None


def conv(s, spec):
    nd = 1 if spec.name.endswith("1d") else 2
    x = s.pick(lambda v: v.type.dtype in ("float32", "float64") and v.type.rank == nd + 2)
    if x is None:
        return False
    sh = x.type.shape
    if not s.nonempty(x.type):  # conv rejects empty spatial dims even when padded
        return False
    ksz, stride, padding = s.ch.integer(1, 3), s.ch.integer(1, 2), s.ch.integer(0, 1)
    if any(s.min_dim(e) + 2 * padding < ksz for e in sh[2:]):
        return False
    out = s.ch.choice((1, 4, 8))
    kshape = ", ".join([str(out), "{0}.shape[1]"] + [str(ksz)] * nd)
    w = _weight(f"{out} * {{0}}.shape[1] * {ksz ** nd}", kshape)
    sp = [f"(({e})+{2 * padding - ksz})//{stride}+1" if not isinstance(e, int) else
          (e + 2 * padding - ksz) // stride + 1 for e in sh[2:]]
    c = max_size(s, sh[1]) * ksz ** nd
    return s.assign(spec.name, f"{F}conv{nd}d({{0}}, {w}, stride={stride}, padding={padding})", (Ref(x.name),),
                    TensorType((sh[0], out, *sp), x.type.dtype), x.bound * 0.5 * c + 1) is not None


def pool(s, spec):
    nd = 1 if spec.name.endswith("1d") else 2
    x = s.pick(lambda v: v.type.dtype in ("float32", "float64", "bfloat16") and v.type.rank in (nd + 1, nd + 2))
    if x is None:
        return False
    sp = x.type.shape[-nd:]
    if "adaptive" in spec.name:
        o = s.ch.integer(1, 3)
        if any(s.min_dim(e) < 1 for e in x.type.shape):
            return False
        tmpl = f"{spec.name}({{0}}, {o})"
        new = (o,) * nd
    else:
        k = s.ch.integer(2, 3)
        if any(s.min_dim(e) < k for e in sp) or any(s.min_dim(e) < 1 for e in x.type.shape):
            return False
        tmpl = f"{spec.name}({{0}}, {k})"
        new = tuple(e // k if isinstance(e, int) else f"({e})//{k}" for e in sp)
    return s.assign(spec.name, tmpl, (Ref(x.name),), TensorType(x.type.shape[:-nd] + new, x.type.dtype),
                    x.bound, exact=exact_of(x.type.dtype, "max_pool" in spec.name, x)) is not None


def norm_layer(s, spec):
    x = s.pick(lambda v: v.type.is_float and v.type.rank >= (2 if "group" in spec.name else 1)
               and s.nonempty(v.type))
    if x is None:
        return False
    n = max_size(s, shapes.numel(x.type.shape[1:] if x.type.rank > 1 else x.type.shape))
    bound = math.sqrt(max(n, 1)) * 1.5 + 1
    if spec.name == F + "layer_norm":
        affine = s.ch.boolean()
        w = ", torch.linspace(0.5, 1.5, {0}.shape[-1], dtype=torch.float64, device={0}.device).to({0}.dtype), " \
            "torch.linspace(-1, 1, {0}.shape[-1], dtype=torch.float64, device={0}.device).to({0}.dtype)" if affine else ""
        tmpl = F + "layer_norm({0}, {0}.shape[-1:]%s)" % w
    elif spec.name == F + "group_norm":
        g = s.ch.choice(("1", "{0}.shape[1]"))
        per_group = shapes.numel(x.type.shape[2:] if g != "1" else x.type.shape[1:])
        if s.min_dim(per_group) < 2:  # training-mode norm needs two values per group
            return False
        tmpl = F + "group_norm({0}, %s)" % g
    elif spec.name == F + "normalize":
        tmpl, bound = F + "normalize({0}, dim=-1)", 1.0
    else:  # rms_norm
        if not hasattr_rms():
            return False
        tmpl = F + "rms_norm({0}, {0}.shape[-1:])"
    return s.assign(spec.name, tmpl, (Ref(x.name),), x.type, bound) is not None


def hasattr_rms() -> bool:
    import torch
    return hasattr(torch.nn.functional, "rms_norm")


def softmax(s, spec):
    x = s.pick(lambda v: v.type.is_float and v.type.rank >= 1)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    n = max_size(s, x.type.shape[d])
    bound = 1.0 if spec.bounded else 2 * x.bound + math.log(max(n, 1)) + 1
    return s.assign(spec.name, spec.template, (Ref(x.name), Lit(d)), x.type, bound) is not None


def embedding(s, spec):
    w = s.pick(lambda v: v.type.is_float and v.type.rank == 2 and s.min_dim(v.type.shape[0]) >= 1)
    if w is None:
        return False
    k = s.ch.integer(1, 9)
    idx = f"(torch.arange({k}, device={{0}}.device) * 3 % {{0}}.shape[0])"
    return s.assign(spec.name, f"{F}embedding({idx}, {{0}})", (Ref(w.name),),
                    TensorType((k, w.type.shape[1]), w.type.dtype), w.bound,
                    exact=exact_of(w.type.dtype, True, w)) is not None


def one_hot(s, spec):
    x = s.pick(lambda v: v.type.dtype in DT["int"] and v.type.rank <= 3)
    if x is None:
        return False
    c = s.ch.choice((5, 16, 33))
    return s.assign(spec.name, f"{F}one_hot(torch.remainder({{0}}.long(), {c}), {c})", (Ref(x.name),),
                    TensorType(x.type.shape + (c,), "int64"), 1) is not None


def dropout(s, spec):
    if s.flags.get("random"):
        return False
    x = s.pick(lambda v: v.type.is_float)
    if x is None:
        return False
    p = s.ch.choice((0.25, 0.5))
    s.flags["random"] = 1
    ok = s.assign(spec.name, f"{F}dropout({{0}}.float(), p={p}, training=True).to({{0}}.dtype)", (Ref(x.name),),
                  x.type, x.bound / (1 - p)) is not None
    if not ok:
        s.flags["random"] = 0
    return ok


def loss(s, spec):
    x = s.pick(lambda v: v.type.is_float and v.type.rank >= 1)
    if x is None:
        return False
    o = s.pick(lambda v: v.type.shape == x.type.shape and v.type.is_float and v is not x) or x
    n = max_size(s, shapes.numel(x.type.shape))
    other = "{1}.to({0}.dtype)" if o is not x else "{0}.flip(0)"
    args = (Ref(x.name), Ref(o.name)) if o is not x else (Ref(x.name),)
    red = s.ch.choice(("mean", "sum", "none"))
    if red == "mean" and s.min_dim(shapes.numel(x.type.shape)) < 1:
        red = "sum"
    shape = x.type.shape if red == "none" else ()
    scale = 1 if red != "sum" else max(n, 1)
    kind = spec.name.rsplit(".", 1)[1]
    if kind == "binary_cross_entropy_with_logits":
        tmpl = f"{F}{kind}({{0}}, torch.sigmoid({other}), reduction='{red}')"
        bound = (x.bound + 1) * scale
    else:
        tmpl = f"{F}{kind}({{0}}, {other}, reduction='{red}')"
        bound = (x.bound + o.bound) ** 2 * scale
    return s.assign(spec.name, tmpl, args, TensorType(shape, x.type.dtype), bound) is not None


def cross_entropy(s, spec):
    x = s.pick(lambda v: v.type.is_float and v.type.rank == 2 and s.nonempty(v.type))
    if x is None:
        return False
    tgt = "torch.arange({0}.shape[0], device={0}.device) % {0}.shape[1]"
    if spec.name == F + "nll_loss":
        tmpl = f"{F}nll_loss({F}log_softmax({{0}}, 1), {tgt})"
    else:
        tmpl = f"{F}cross_entropy({{0}}, {tgt})"
    return s.assign(spec.name, tmpl, (Ref(x.name),), TensorType((), x.type.dtype),
                    2 * x.bound + math.log(max_size(s, x.type.shape[1])) + 1) is not None


# ---- casts and creation ------------------------------------------------------------
from .ops_creation import arange, cast, like, scalar_tensor, type_as  # noqa: E402  (casts and creation)


MATH = REDUCE + (
    Spec("torch.topk", "sort", topk, 0.5),
    Spec("torch.kthvalue", "sort", topk, 0.3),
    Spec("torch.matmul", "matmul", matmul, 0.8),
    Spec("Tensor.__matmul__", "matmul", matmul, 0.3),
    Spec("torch.mm", "matmul", matmul, 0.4),
    Spec("torch.bmm", "matmul", matmul, 0.4),
    Spec("torch.addmm", "matmul", matmul, 0.3),
    Spec("torch.baddbmm", "matmul", matmul, 0.2),
    Spec("torch.einsum", "matmul", matmul, 0.4),
    Spec("torch.mv", "matmul", matmul, 0.2),
    Spec("torch.outer", "matmul", matmul, 0.2),
    Spec("torch.tensordot", "matmul", matmul, 0.2),
    Spec(F + "linear", "nn", linear, 0.6),
    Spec(F + "conv1d", "nn", conv, 0.4),
    Spec(F + "conv2d", "nn", conv, 0.4),
    Spec(F + "max_pool1d", "nn", pool, 0.3),
    Spec(F + "max_pool2d", "nn", pool, 0.3),
    Spec(F + "avg_pool1d", "nn", pool, 0.3),
    Spec(F + "avg_pool2d", "nn", pool, 0.3),
    Spec(F + "adaptive_avg_pool1d", "nn", pool, 0.2),
    Spec(F + "adaptive_avg_pool2d", "nn", pool, 0.2),
    Spec(F + "adaptive_max_pool2d", "nn", pool, 0.2),
    Spec(F + "layer_norm", "nn", norm_layer, 0.5),
    Spec(F + "group_norm", "nn", norm_layer, 0.3),
    Spec(F + "normalize", "nn", norm_layer, 0.3),
    Spec(F + "rms_norm", "nn", norm_layer, 0.2),
    Spec("torch.softmax", "nn", softmax, 0.6, template="torch.softmax({0}, {1})", bounded=True),
    Spec(F + "softmax", "nn", softmax, 0.4, template=F + "softmax({0}, {1})", bounded=True),
    Spec("Tensor.softmax", "nn", softmax, 0.2, template="{0}.softmax({1})", bounded=True),
    Spec("torch.log_softmax", "nn", softmax, 0.5, template="torch.log_softmax({0}, {1})", bounded=False),
    Spec(F + "log_softmax", "nn", softmax, 0.3, template=F + "log_softmax({0}, {1})", bounded=False),
    Spec(F + "embedding", "nn", embedding, 0.3),
    Spec(F + "one_hot", "nn", one_hot, 0.4),
    Spec(F + "dropout", "nn", dropout, 0.3),
    Spec(F + "mse_loss", "nn", loss, 0.2),
    Spec(F + "l1_loss", "nn", loss, 0.2),
    Spec(F + "smooth_l1_loss", "nn", loss, 0.2),
    Spec(F + "binary_cross_entropy_with_logits", "nn", loss, 0.2),
    Spec(F + "cross_entropy", "nn", cross_entropy, 0.2),
    Spec(F + "nll_loss", "nn", cross_entropy, 0.2),
    Spec("Tensor.to", "cast", cast, 1.0),
    Spec("Tensor.type", "cast", cast, 0.2),
    Spec("Tensor.float", "cast", cast, 0.3),
    Spec("Tensor.double", "cast", cast, 0.2),
    Spec("Tensor.half", "cast", cast, 0.2),
    Spec("Tensor.bfloat16", "cast", cast, 0.2),
    Spec("Tensor.int", "cast", cast, 0.2),
    Spec("Tensor.long", "cast", cast, 0.2),
    Spec("Tensor.bool", "cast", cast, 0.2),
    Spec("Tensor.short", "cast", cast, 0.1),
    Spec("Tensor.char", "cast", cast, 0.1),
    Spec("Tensor.byte", "cast", cast, 0.1),
    Spec("Tensor.type_as", "cast", type_as, 0.2),
    Spec("torch.zeros_like", "creation", like, 0.2),
    Spec("torch.ones_like", "creation", like, 0.2),
    Spec("torch.full_like", "creation", like, 0.2),
    Spec("torch.empty_like", "creation", like, 0.1),
    Spec("Tensor.new_zeros", "creation", like, 0.1),
    Spec("Tensor.new_ones", "creation", like, 0.1),
    Spec("Tensor.new_full", "creation", like, 0.1),
    Spec("torch.rand_like", "creation", like, 0.15),
    Spec("torch.randn_like", "creation", like, 0.1),
    Spec("torch.arange", "creation", arange, 0.3),
    Spec("torch.linspace", "creation", arange, 0.2),
    Spec("torch.full", "creation", arange, 0.2),
    Spec("torch.zeros", "creation", arange, 0.1),
    Spec("torch.ones", "creation", arange, 0.1),
    Spec("torch.eye", "creation", arange, 0.1),
    Spec("torch.tensor", "creation", scalar_tensor, 0.1),
    Spec("torch.scalar_tensor", "creation", scalar_tensor, 0.1),
)
_ = Val
