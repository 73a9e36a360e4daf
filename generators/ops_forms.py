"""Non-default argument forms of ops the registry already has.

Contract: specs (same protocol as ``ops.Spec``) for pooling with stride,
padding, dilation and ``ceil_mode``; matmul/bmm with broadcast batch dims and
1-D operands and a (..., k, 1) column of a second value; integer dtype views that widen (a narrow storage read as a wider
integer, masked back into range); ``out=`` into an existing writable value for
reductions and multi-output ops. Every output size is computed for each call
of the schedule and checked against the static shape expression, so a form
whose size rule cannot be written statically is refused, never mistyped.
"""
from __future__ import annotations

import math

from . import shapes
from .ir import Lit, Ref, TensorType
from .ops import Spec, exact_of, max_size, writable
from .scope import Scope

F = "torch.nn.functional."


def envs(s: Scope):
    """One {symbol: size} dict per call of the schedule."""
    n = len(next(iter(s.sizes.values()), [0]))
    return [{k: v[i] for k, v in s.sizes.items()} for i in range(max(n, 1))]


def dims_ok(s: Scope, dims, rule) -> bool:
    """rule(concrete input size) == the static dim expression's value, on every call, and >= 1."""
    for env in envs(s):
        for d, expr in dims:
            want = rule(shapes.dim_value(d, env))
            if want < 1 or shapes.dim_value(expr, env) != want:
                return False
    return True


# ---- pooling with stride, padding, dilation, ceil_mode --------------------------------
def _pool_len(n: int, k: int, st: int, p: int, dil: int, ceil: bool) -> int:
    eff = dil * (k - 1) + 1
    num = n + 2 * p - eff
    if num < 0:
        return 0
    out = (-(-num // st) if ceil else num // st) + 1
    if ceil and (out - 1) * st >= n + p:  # the last window must start inside the input or left pad
        out -= 1
    return out


def pool_form(s, spec):
    nd = 1 if spec.name.split("[")[0].endswith("1d") else 2
    is_max = "max_pool" in spec.name
    x = s.pick(lambda v: v.type.dtype in ("float32", "float64", "bfloat16") and v.type.rank in (nd + 1, nd + 2)
               and s.nonempty(v.type))
    if x is None:
        return False
    ch = s.ch
    k = ch.integer(2, 3)
    st = ch.choice((1, 2, 3))
    p = ch.integer(0, k // 2)
    dil = ch.choice((1, 2)) if is_max else 1
    ceil = ch.boolean(0.6)
    if st == k and p == 0 and dil == 1 and not ceil:
        ceil = True  # always a non-default form
    eff = dil * (k - 1) + 1
    new = []
    for e in x.type.shape[-nd:]:
        num = f"({e})+{2 * p - eff}" if not isinstance(e, int) else e + 2 * p - eff
        if ceil:
            new.append(f"(({num})+{st - 1})//{st}+1" if not isinstance(num, int) else -(-num // st) + 1)
        else:
            new.append(f"({num})//{st}+1" if not isinstance(num, int) else num // st + 1)
    rule = lambda n: _pool_len(n, k, st, p, dil, ceil)  # noqa: E731
    if not dims_ok(s, list(zip(x.type.shape[-nd:], new)), rule):
        return False
    if is_max:
        tmpl = f"{spec.name.split('[')[0]}({{0}}, {k}, stride={st}, padding={p}, dilation={dil}, ceil_mode={ceil})"
    else:
        cip = ch.boolean()
        tmpl = (f"{spec.name.split('[')[0]}({{0}}, {k}, stride={st}, padding={p}, ceil_mode={ceil}, "
                f"count_include_pad={cip})")
    t = TensorType(x.type.shape[:-nd] + tuple(new), x.type.dtype)
    return s.assign(spec.name, tmpl, (Ref(x.name),), t, x.bound,
                    exact=exact_of(x.type.dtype, is_max, x)) is not None


# ---- matmul with broadcast batch dims and 1-D operands --------------------------------
def _mm_ok(v) -> bool:
    return v.type.dtype in ("float32", "float64", "bfloat16")


def _lin(n_expr: str, shape_expr: str) -> str:
    return f"torch.linspace(-0.5, 0.5, {n_expr}, dtype=torch.float64, device={{0}}.device).to({{0}}.dtype).reshape({shape_expr})"


#: the forms torch.matmul[form] draws, each with an equal share
MATMUL_FORMS = ("vec_right", "vec_left", "batch", "bmm_expand", "column")


def matmul_form(s, spec):
    """vec_right: (..., n, k) @ (k,); vec_left: (n,) @ (..., n, k); batch: (B, 1, n, k) @ (B, k, n);
    bmm_expand: bmm against a weight expanded over the batch (stride 0); column: two distinct
    values, (..., n, k) @ (..., k, 1), batch dims broadcast."""
    ch = s.ch
    form = ch.choice(MATMUL_FORMS) if spec.name.startswith("torch.matmul") else "bmm_expand"
    if form == "column":
        return _matmul_column(s, spec)
    if form == "bmm_expand":
        x = s.pick(lambda v: _mm_ok(v) and v.type.rank == 3)
    elif form == "batch":
        x = s.pick(lambda v: _mm_ok(v) and v.type.rank == 3)
    else:
        x = s.pick(lambda v: _mm_ok(v) and v.type.rank >= 1 if form == "vec_right" else _mm_ok(v) and v.type.rank >= 2)
    if x is None:
        return False
    sh = x.type.shape
    k = max(max_size(s, sh[-1]), 1)
    if form == "vec_right":
        tmpl = "torch.matmul({0}, %s)" % _lin("{0}.shape[-1]", "-1")
        shape, bound = sh[:-1], x.bound * 0.5 * k
    elif form == "vec_left":
        n = max(max_size(s, sh[-2]), 1)
        tmpl = "torch.matmul(%s, {0})" % _lin("{0}.shape[-2]", "-1")
        shape, bound = sh[:-2] + sh[-1:], x.bound * 0.5 * n
    elif form == "batch":
        # (B, 1, n, k) @ (B, k, n): batch dims (B, 1) and (B,) broadcast to (B, B)
        tmpl = "torch.matmul({0}.unsqueeze(-3), {0}.transpose(-1, -2))"
        shape = (sh[0], sh[0], sh[1], sh[1])
        bound = x.bound * x.bound * k
    else:
        m = ch.choice((1, 3, 8))
        w = _lin(f"{{0}}.shape[-1] * {m}", f"1, {{0}}.shape[-1], {m}")
        tmpl = f"torch.bmm({{0}}, {w}.expand({{0}}.shape[0], -1, -1))"
        shape, bound = sh[:-1] + (m,), x.bound * 0.5 * k
    return s.assign(spec.name, tmpl, (Ref(x.name),), TensorType(tuple(shape), x.type.dtype), bound) is not None


def _matmul_column(s, spec):
    """``x @ y.unsqueeze(-1)``: y is another float value whose last dim (or, transposed, its
    second-to-last) is x's k, cast to x's dtype; the batch dims of both broadcast (a
    matrix-vector product the compiler may lower as mm, bmm or a reduction)."""
    x = s.pick(lambda v: _mm_ok(v) and v.type.rank >= 2)
    if x is None:
        return False
    sh = x.type.shape

    def column(v):  # (expression, shape without the column dim) of v as (..., k), or None
        vs = v.type.shape
        if v.name == x.name or not v.type.is_float or v.type.rank < 1:
            return None
        if vs[-1] == sh[-1]:
            return "{1}", vs
        if v.type.rank >= 2 and vs[-2] == sh[-1]:
            return "{1}.transpose(-1, -2)", vs[:-2] + (vs[-1], vs[-2])
        return None

    y = s.pick(lambda v: column(v) is not None and shapes.broadcast(sh[:-2], column(v)[1][:-1]) is not None)
    if y is None:
        return False
    expr, ysh = column(y)
    if y.type.dtype != x.type.dtype:
        expr += ".to({0}.dtype)"
    batch = shapes.broadcast(sh[:-2], ysh[:-1])
    k = max(max_size(s, sh[-1]), 1)
    t = TensorType(tuple(batch) + (sh[-2], 1), x.type.dtype)
    return s.assign(spec.name, f"torch.matmul({{0}}, {expr}.unsqueeze(-1))", (Ref(x.name), Ref(y.name)), t,
                    x.bound * y.bound * k) is not None


# ---- integer dtype views that widen ---------------------------------------------------
_WIDTH = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8}
_WIDEN = {"uint8": ("int16", "int32"), "int8": ("int16", "int32"), "bool": ("int16",), "int16": ("int32",),
          "int32": ("int64",)}


def dtype_widen(s, spec):
    """``x.view(wider)`` reads r narrow elements as one: the last dim shrinks r-fold. The wide
    values mix neighbours' bits, so a mask brings them back into the dtype's safe range."""
    x = s.pick(lambda v: v.type.dtype in _WIDEN and v.type.rank >= 1)
    if x is None:
        return False
    dst = s.ch.choice(_WIDEN[x.type.dtype])
    r = _WIDTH[dst] // _WIDTH[x.type.dtype]
    last = x.type.shape[-1]
    mask = 1023
    # straight view only of a fresh, contiguous storage (an input may sit at an odd storage offset)
    if x.contig and not x.is_input and x.root == x.name and isinstance(last, int) and last % r == 0:
        tmpl = "({0}.view(torch.%s) & %d)" % (dst, mask)
        shape = x.type.shape[:-1] + (last // r,)
    else:  # make the last dim a multiple of r first: r copies of each element side by side
        tmpl = ("({0}.unsqueeze(-1).expand(*{0}.shape, %d).clone(memory_format=torch.contiguous_format)"
                ".view(torch.%s) & %d)") % (r, dst, mask)
        shape = x.type.shape + (1,)
    return s.assign(spec.name, tmpl, (Ref(x.name),), TensorType(shape, dst), mask) is not None


# ---- out= for reductions and multi-output ops ------------------------------------------
_OUT_REDUCE = {"sum": "float", "mean": "float", "amax": "num", "amin": "num", "prod": "float"}


def out_reduction(s, spec):
    """``torch.<red>(x, d, keepdim, out=t)`` where t is a writable value of exactly the result shape,
    or a fresh ``torch.empty`` of that shape (an Assign) when none exists."""
    red = spec.red
    x = s.pick(lambda v: v.type.rank >= 1 and (v.type.is_float if _OUT_REDUCE[red] == "float"
                                               else v.type.dtype in ("float32", "float64", "int32", "int64")))
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    if red in ("amax", "amin", "mean", "prod") and s.min_dim(x.type.shape[d]) < 1:
        return False
    keep = s.ch.boolean()
    shape = tuple(1 if i == d else e for i, e in enumerate(x.type.shape)) if keep else \
        x.type.shape[:d] + x.type.shape[d + 1:]
    n = max(max_size(s, x.type.shape[d]), 1)
    if red == "prod":  # a power only for prod: a float ** n overflows Python before it nears inf
        base = max(x.bound, 1.0)
        bound = math.inf if n * math.log(base) > math.log(1e30) else base ** n
    else:
        bound = x.bound * n if red == "sum" else x.bound
    if bound > 1e30:
        return False
    t = s.pick(lambda v: writable(v) and v.type.shape == shape and v.type.dtype == x.type.dtype
               and v.root != x.root)
    if t is not None:
        return s.mutate(spec.name, f"torch.{red}({{1}}.detach(), {d}, keepdim={keep}, out={{0}})",
                        (Ref(t.name), Ref(x.name)), t, max(t.bound, bound), exact=False)
    dims = ", ".join("1" if (i == d) else (str(e) if isinstance(e, int) else f"{{0}}.shape[{i}]")
                     for i, e in enumerate(x.type.shape) if i != d or keep)
    empty = f"torch.empty(({dims}{',' if len(shape) == 1 else ''}), dtype={{0}}.dtype, device={{0}}.device)"
    # out= refuses inputs that require grad (a module parameter may reach x): read a detached x
    return s.assign(spec.name, f"torch.{red}({{0}}.detach(), {d}, keepdim={keep}, out={empty})", (Ref(x.name),),
                    TensorType(shape, x.type.dtype), bound,
                    exact=exact_of(x.type.dtype, red in ("amax", "amin"), x)) is not None


def out_multi(s, spec):
    """Multi-output ops with ``out=(a, b)``: aminmax (min and max) and sort (values; the indices
    go to a scratch tensor that nothing reads)."""
    x = s.pick(lambda v: v.type.rank >= 1 and v.type.dtype in ("float32", "float64", "int32", "int64"))
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    if s.min_dim(x.type.shape[d]) < 1:
        return False
    dims = lambda keep: ", ".join("1" if i == d else (str(e) if isinstance(e, int) else f"{{0}}.shape[{i}]")  # noqa: E731
                                  for i, e in enumerate(x.type.shape) if i != d or keep)
    if spec.name.startswith("torch.aminmax"):
        keep = s.ch.boolean()
        shape = tuple(1 if i == d else e for i, e in enumerate(x.type.shape)) if keep else \
            x.type.shape[:d] + x.type.shape[d + 1:]
        sz = dims(keep) + ("," if len(shape) == 1 else "")
        e = f"torch.empty(({sz}), dtype={{0}}.dtype, device={{0}}.device)"
        pick = s.ch.integer(0, 1)
        tmpl = f"torch.aminmax({{0}}.detach(), dim={d}, keepdim={keep}, out=({e}, {e})).{('min', 'max')[pick]}"
    else:
        shape = x.type.shape
        sz = ", ".join(str(e) if isinstance(e, int) else f"{{0}}.shape[{i}]" for i, e in enumerate(shape))
        sz += "," if len(shape) == 1 else ""
        tmpl = (f"torch.sort({{0}}.detach(), {d}, descending={s.ch.boolean()}, out=(torch.empty(({sz}), dtype={{0}}.dtype, "
                f"device={{0}}.device), torch.empty(({sz}), dtype=torch.int64, device={{0}}.device)))[0]")
    return s.assign(spec.name, tmpl, (Ref(x.name),), TensorType(tuple(shape), x.type.dtype), x.bound,
                    exact=exact_of(x.type.dtype, True, x)) is not None


FORMS = (
    Spec(F + "max_pool1d[form]", "nn", pool_form, 0.3),
    Spec(F + "max_pool2d[form]", "nn", pool_form, 0.45),
    Spec(F + "avg_pool1d[form]", "nn", pool_form, 0.3),
    Spec(F + "avg_pool2d[form]", "nn", pool_form, 0.45),
    Spec("torch.matmul[form]", "matmul", matmul_form, 0.4),
    Spec("torch.bmm[expand]", "matmul", matmul_form, 0.15),
    Spec("Tensor.view[widen]", "view", dtype_widen, 0.2),
    Spec("torch.sum[out]", "reduction", out_reduction, 0.1, red="sum"),
    Spec("torch.mean[out]", "reduction", out_reduction, 0.05, red="mean"),
    Spec("torch.amax[out]", "reduction", out_reduction, 0.1, red="amax"),
    Spec("torch.amin[out]", "reduction", out_reduction, 0.05, red="amin"),
    Spec("torch.prod[out]", "reduction", out_reduction, 0.05, red="prod"),
    Spec("torch.aminmax[out]", "reduction", out_multi, 0.15),
    Spec("torch.sort[out]", "sort", out_multi, 0.1),
)
_ = Lit
