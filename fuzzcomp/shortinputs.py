"""The ``inputs()`` function of a short repro: every input in plain torch, bitwise the campaign's.

Contract: ``inputs_fn(spec, values)`` returns the lines of ``def inputs(...)`` and what the file
around it needs (names requiring grad, whether it takes ``fp64``, whether the ``salt`` helper
is used). Each tensor is built from its own expression: a literal where it has at most 16
elements, else the seeded expression the campaign's runtime used; non-contiguous layouts through
the real expression (``.transpose``, slicing, ``expand``, an offset view, a view of another
input), special values (NaN, infinities, signed zeros, extremes) through a 6-line ``salt``
helper; dtype, shape and strides as comments. Module state and the program's globals (tensor
and scalar) are set there too, before each call, as the campaign did. Every expression is
evaluated here and compared bitwise with ``runtime.make_input``; one that does not rebuild
raises ``Unsupported`` and the long form is written instead.
"""
from __future__ import annotations

import torch

_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}
_CAST = {"float32": ".float()", "float64": ".double()", "float16": ".half()", "bfloat16": ".bfloat16()"}
_LAYOUT_WORDS = {"transposed": "a transposed view", "sliced": "every other column",
                 "expanded": "expanded from size 1", "offset": "a view at storage offset 3",
                 "channels_last": "channels-last"}
SALT_HELPER = [
    "def salt(t, seed):  # about a third of the elements become NaN, +-inf, +-0, +-max or +-tiny",
    "    fi = torch.finfo(t.dtype)",
    "    pool = torch.tensor([float('nan'), float('inf'), -float('inf'), -0.0, 0.0, fi.max, -fi.max, fi.tiny,",
    "                         -fi.tiny], dtype=torch.float64).to(t.dtype)",
    "    g = torch.Generator().manual_seed(seed)",
    "    pick = torch.rand(t.shape, generator=g) < 0.3",
    "    return torch.where(pick, pool[torch.randint(0, len(pool), t.shape, generator=g)], t)",
    "", ""]


class Unsupported(Exception):
    """The short form cannot say this case; the message says why."""


class _Raw(str):
    def __repr__(self):
        return str(self)


def short_float(v: float, dtype: torch.dtype) -> str:
    """The shortest decimal that rounds back to ``v`` in ``dtype``."""
    if v != v or v in (float("inf"), float("-inf")):
        return f"float({str(v)!r})"
    for p in range(1, 18):
        s = f"{v:.{p}g}"
        if torch.tensor(float(s), dtype=dtype).item() == v:
            return s if any(c in s for c in ".en") else s + ".0"
    return repr(v)


def literal(t: torch.Tensor) -> str:
    if t.numel() == 0:  # a nested empty list would lose the shape
        return f"torch.empty({dims(t.shape)}, dtype=torch.{str(t.dtype).split('.')[-1]})"
    if t.dtype.is_floating_point:
        def fmt(x):
            return [fmt(y) for y in x] if isinstance(x, list) else _Raw(short_float(x, t.dtype))
        body = repr(fmt(t.tolist()))
    else:
        body = repr(t.tolist())
    return f"torch.tensor({body}, dtype=torch.{str(t.dtype).split('.')[-1]})"


def dims(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def base_expr(shape, dtype: str, seed: int, special: bool = False) -> tuple[str, bool]:
    """(the expression for the runtime's base values, whether it calls ``salt``)."""
    from . import runtime
    t = runtime._base_values(tuple(shape), dtype, seed, 0.0, 0)
    if special:
        t = runtime.salt_special(t, seed)
    if t.numel() <= 16:
        return literal(t), False
    gen = f"generator=torch.Generator().manual_seed({seed})"
    if dtype == "bool":
        return f"torch.randint(0, 2, {dims(shape)}, {gen}).bool()", False
    if getattr(torch, dtype).is_floating_point:
        cast = _CAST.get(dtype, f".to(torch.{dtype})")
        expr = f"(torch.rand({dims(shape)}, {gen}, dtype=torch.float64) * 4 - 2){cast}"
        return (f"salt({expr}, {seed * 7 + 5})", True) if special else (expr, False)
    lo = 0 if dtype == "uint8" else -8
    return f"torch.randint({lo}, 9, {dims(shape)}, {gen}).to(torch.{dtype})", False


def layout_expr(base: str, shape, layout: str) -> tuple[str, list]:
    """(expression, base shape) of a tensor of ``shape`` in ``layout`` over a base tensor."""
    base_shape = list(shape)
    if layout == "transposed":
        base_shape[-1], base_shape[-2] = base_shape[-2], base_shape[-1]
        return (f"{base}.t()" if len(shape) == 2 else f"{base}.transpose(-1, -2)"), base_shape
    if layout == "sliced":
        base_shape[-1] *= 2
        return f"{base}[..., ::2]", base_shape
    if layout == "expanded":
        base_shape[0] = 1
        return f"{base}.expand{dims(shape)}", base_shape
    if layout == "offset":
        n = 1
        for d in shape:
            n *= d
        return f"{base}[3:].view{dims(shape)}", [n + 3]
    if layout == "channels_last":
        return f"{base}.contiguous(memory_format=torch.channels_last)", base_shape
    return base, base_shape


def _alias_expr(of: str, view: str) -> str:
    return {"same": of, "transposed": f"{of}.transpose(-1, -2)", "offset": f"{of}[1:]"}.get(view, f"{of}.view({of}.shape)")


class Built:
    """What ``input_lines`` produced for one call."""

    def __init__(self):
        self.lines: list[str] = []
        self.rg: list[str] = []          # inputs that require grad
        self.globals: list[str] = []     # module-level names inputs() assigns
        self.salt = False                # the ``salt`` helper is used


def input_lines(spec, entry, values: bool) -> Built:
    """The lines building each input (and the state and globals) of one call inside ``inputs()``.
    values: float bases go through ``up()`` (the fp64 run takes the same values in float64)."""
    from . import runtime
    sizes, seed = entry[0], entry[1]
    extra = entry[2] if len(entry) > 2 else {}
    env = dict(zip(spec.symbols, sizes))
    scalars = dict(extra.get("scalars", ()))
    grads = list(dict.fromkeys(tuple(extra.get("requires_grad") or ()) + tuple(spec.requires_grad)))
    out, names = Built(), [s[0] for s in spec.inputs]
    dev = "" if spec.device == "cpu" else f".to({spec.device!r})"
    for i, (path, shape, dtype, kind) in enumerate(spec.state):  # module state: seeded before each call
        if path in spec.skip:
            continue
        concrete = [env[d] if isinstance(d, str) else d for d in shape]
        expr, _ = base_expr(concrete, dtype, seed * 31 + 1009 + i)
        if values and getattr(torch, dtype).is_floating_point:
            expr = f"up({expr})"
        if kind == "buffer_var":
            expr = f"({expr}.abs() + 0.5)"
        if kind == "global":
            out.globals.append(path)
            out.lines.append(f"{path} = {expr}{dev}  # tensor global {dtype} {tuple(concrete)}")
        elif kind == "param":
            out.lines.append(f"{path} = torch.nn.Parameter({expr}{dev})  # parameter {dtype} {tuple(concrete)}")
        else:
            out.lines.append(f"{path} = {expr}{dev}  # buffer {dtype} {tuple(concrete)}")
    for name, value in extra.get("globals", ()):  # scalar globals the program reads
        if name in spec.skip:
            continue
        out.globals.append(name)
        out.lines.append(f"{name} = {value!r}")
    for name in extra.get("rebound", ()):  # globals the program rebinds: unset before each call
        if name in spec.skip:
            continue
        out.globals.append(name)
        out.lines.append(f"{name} = None  # the program rebinds it")
    for i, s in enumerate(spec.inputs):  # seeds follow the campaign's input numbering
        name, shape, dtype, layout = s[:4]
        if name in spec.skip:
            continue
        info = s[4] if len(s) > 4 else {}
        kind = info.get("kind", "tensor")
        if kind in ("int", "float"):
            out.lines.append(f"{name} = {scalars[name]!r}")
            continue
        if kind == "alias":
            of = names[info["of"]]
            out.lines.append(f"{name} = {_alias_expr(of, info.get('view', 'same'))}  # a view of {of}")
            continue
        concrete = [env[d] if isinstance(d, str) else d for d in shape]
        special = bool(info.get("special"))
        seeds = [seed * 31 + i] if kind == "tensor" else [(seed * 31 + i) * 7 + j for j in range(info["count"])]
        exprs = []
        for sd in seeds:
            _, base_shape = layout_expr("b", concrete, layout)
            base, salted = base_expr(base_shape, dtype, sd, special and kind == "tensor")
            expr, _ = layout_expr(base, concrete, layout)
            want = runtime.make_input(concrete, dtype, layout, sd, special=special and kind == "tensor")
            scope = {"torch": torch}
            if salted:
                exec("\n".join(SALT_HELPER), scope)  # noqa: S102 - our own helper, checked below
                out.salt = True
            got = eval(expr, scope)  # noqa: S307 - our own expression, checked bitwise
            if got.shape != want.shape or got.stride() != want.stride() or got.dtype != want.dtype or \
                    not bool(((got == want) | (got != got) & (want != want)).all()) or \
                    (got.is_floating_point() and not torch.equal(torch.signbit(got), torch.signbit(want))):
                raise Unsupported(f"input {name} does not rebuild bitwise")
            if getattr(torch, dtype).is_floating_point and values:
                base = f"up({base})"  # the fp64 run upcasts the base, then takes the same view
            expr, _ = layout_expr(base + dev, concrete, layout)
            exprs.append(expr)
            note = f"  # {dtype} {tuple(want.shape)}, strides {tuple(want.stride())}"
            if layout != "contiguous":
                note += f": {_LAYOUT_WORDS.get(layout, layout)}"
            if special:
                note += ", with special values"
        if name in grads and getattr(torch, dtype).is_floating_point and kind == "tensor" and \
                not extra.get("inference_inputs"):
            exprs = [f"{exprs[0]}.requires_grad_()"]
            out.rg.append(name)
            note += ", requires grad"
        if kind == "tensor":
            value = exprs[0]
        elif kind == "dict":
            value = "{" + ", ".join(f"'k{j}': {e}" for j, e in enumerate(exprs)) + "}"
        else:
            value = ("[" if kind == "list" else "(") + ", ".join(exprs) + ("]" if kind == "list" else ",)")
        out.lines.append(f"{name} = {value}{note}")
    return out


def inputs_fn(spec, values: bool) -> tuple[list[str], list[str], bool, bool]:
    """(lines of ``def inputs(...)``, names requiring grad, whether it takes ``fp64``, whether it
    uses the ``salt`` helper)."""
    names = [s[0] for s in spec.inputs if s[0] not in spec.skip]
    fp64 = values and (any(s[2] in _EPS for s in spec.inputs
                           if s[0] not in spec.skip and (len(s) < 5 or s[4].get("kind", "tensor") not in
                                                         ("alias", "int", "float")))
                       or any(st[2] in _EPS for st in spec.state))
    many = len(spec.calls) > 1
    params = (["call"] if many else []) + (["fp64=False"] if fp64 else [])
    out = [f"def inputs({', '.join(params)}):"]
    body: list[str] = []
    if fp64:
        body += ["    def up(t):  # the fp64 reference runs on the same values in float64",
                 "        return t.double() if fp64 else t", ""]
    rg_all: list[str] = []
    gnames: list[str] = []
    salt = False
    for k, entry in enumerate(spec.calls):
        built = input_lines(spec, entry, values)
        rg_all = rg_all or built.rg
        salt = salt or built.salt
        gnames += [g for g in built.globals if g not in gnames]
        extra = entry[2] if len(entry) > 2 else {}
        ind = "        " if many and k < len(spec.calls) - 1 else "    "
        if many and k < len(spec.calls) - 1:
            body.append(f"    if call == {k}:")
        if extra.get("inference_inputs"):
            body.append(f"{ind}with torch.inference_mode():  # inference tensors")
            body += [f"{ind}    {ln}" for ln in built.lines]
        else:
            body += [f"{ind}{ln}" for ln in built.lines]
        for name, dim, how in extra.get("marks", ()):
            fn = "maybe_mark_dynamic" if how == "maybe" else "mark_dynamic"
            body.append(f"{ind}torch._dynamo.{fn}({name}, {dim})")
        body.append(f"{ind}return [{', '.join(names)}]")
    if gnames:
        out.append(f"    global {', '.join(gnames)}  # the program's globals: set before each call")
    return out + body, rg_all, fp64, salt
