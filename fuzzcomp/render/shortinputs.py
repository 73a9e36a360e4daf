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

import re

import torch

from fuzzcomp.base.layouts import base_shape
from fuzzcomp.run import runtime

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


def base_expr(shape, dtype: str, seed: int, special: bool = False, *, tab: "Table | None" = None,
              seed_of=(1, 0), shape_text: str | None = None) -> tuple[str, bool]:
    """(the expression for the runtime's base values, whether it calls ``salt``).

    With ``tab`` (one block serving every call), the seed is written ``a * seed + b``
    (``seed_of`` = (a, b)) and the shape as ``shape_text``, and no literal is used: the values
    differ from call to call."""
    t = runtime._base_values(tuple(shape), dtype, seed, 0.0, 0)
    if special:
        t = runtime.salt_special(t, seed)
    if t.numel() <= 16 and tab is None:
        return literal(t), False
    seed_s = str(seed) if tab is None else tab.seed_text(*seed_of)
    shape_s = dims(shape) if shape_text is None else shape_text
    gen = f"generator=torch.Generator().manual_seed({seed_s})"
    if dtype == "bool":
        return f"torch.randint(0, 2, {shape_s}, {gen}).bool()", False
    if getattr(torch, dtype).is_floating_point:
        cast = _CAST.get(dtype, f".to(torch.{dtype})")
        expr = f"(torch.rand({shape_s}, {gen}, dtype=torch.float64) * 4 - 2){cast}"
        salt_s = str(seed * 7 + 5) if tab is None else tab.seed_text(seed_of[0] * 7, seed_of[1] * 7 + 5)
        return (f"salt({expr}, {salt_s})", True) if special else (expr, False)
    lo = 0 if dtype == "uint8" else -8
    return f"torch.randint({lo}, 9, {shape_s}, {gen}).to(torch.{dtype})", False


def layout_expr(base: str, shape, layout: str) -> tuple[str, list]:
    """(expression, base shape) of a tensor of ``shape`` in ``layout`` over a base tensor. The
    dims may be ints or the text of a size (``"s0"``): the base shape then holds texts too. The
    shapes follow ``fuzzcomp.base.layouts``."""
    shape_of_base = base_shape(shape, layout, times=_times)
    if layout == "transposed":
        return (f"{base}.t()" if len(shape) == 2 else f"{base}.transpose(-1, -2)"), shape_of_base
    if layout == "sliced":
        return f"{base}[..., ::2]", shape_of_base
    if layout == "expanded":
        return f"{base}.expand{dims(shape)}", shape_of_base
    if layout == "offset":
        return f"{base}[3:].view{dims(shape)}", shape_of_base
    if layout == "channels_last":
        return f"{base}.contiguous(memory_format=torch.channels_last)", shape_of_base
    return base, shape_of_base


def _times(a, b):
    """a * b, computed where both are ints, else written out (a size's name stands for it)."""
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if a == 1 or b == 1:
        return b if a == 1 else a
    return f"{a} * {b}"


class Table:
    """One ``inputs(call)`` block for every call: what changes between calls is named.

    ``sizes`` maps a size symbol to the name the block uses for it (``"s0"``) where its value
    changes between calls, else to its value; ``seeded``: the call seed is the variable ``seed``
    (else the one seed's value); ``scalars``: the scalar inputs and globals the block takes from
    the table. ``values`` holds this call's value of each name (to check the block bitwise)."""

    def __init__(self, sizes: dict, seeded: bool, scalars: set, values: dict, seed: int):
        self.sizes, self.seeded, self.scalars, self.values, self.seed = sizes, seeded, scalars, values, seed

    def seed_text(self, a: int, b: int) -> str:
        if not self.seeded:
            return str(a * self.seed + b)
        head = "seed" if a == 1 else f"{a} * seed"
        return head + (f" + {b}" if b else "")

    def dim(self, d):
        return self.sizes.get(d, d) if isinstance(d, str) else d


def _alias_expr(of: str, view: str) -> str:
    if view.startswith("nonleaf:"):  # the view of a non-leaf copy (see runtime.make_inputs)
        return _alias_expr(f"({of} * 1)", view[len("nonleaf:"):])
    return {"same": of, "transposed": f"{of}.transpose(-1, -2)", "offset": f"{of}[1:]"}.get(view, f"{of}.view({of}.shape)")


class Built:
    """What ``input_lines`` produced for one call."""

    def __init__(self):
        self.lines: list[str] = []
        self.rg: list[str] = []          # inputs that require grad
        self.globals: list[str] = []     # module-level names inputs() assigns
        self.salt = False                # the ``salt`` helper is used


def input_lines(spec, entry, values: bool, tab: Table | None = None) -> Built:
    """The lines building each input (and the state and globals) of one call inside ``inputs()``.
    values: float bases go through ``up()`` (the fp64 run takes the same values in float64).
    tab: the block serves every call (``Table``); the lines are built for this call's entry."""
    sizes, seed = entry[0], entry[1]
    extra = entry[2] if len(entry) > 2 else {}
    env = dict(zip(spec.symbols, sizes))
    scalars = dict(extra.get("scalars", ()))
    grads = list(dict.fromkeys(tuple(extra.get("requires_grad") or ()) + tuple(spec.requires_grad)))
    out, names = Built(), [s[0] for s in spec.inputs]
    dev = "" if spec.device == "cpu" else f".to({spec.device!r})"
    taken = tab.scalars if tab is not None else set()

    def text_shape(shape):  # the shape as the block writes it
        return [tab.dim(d) for d in shape] if tab is not None else [env[d] if isinstance(d, str) else d for d in shape]

    def shown(concrete, shape):  # the shape comment: this call's, or the block's names
        return dims(text_shape(shape)) if tab is not None else str(tuple(concrete))
    for i, (path, shape, dtype, kind) in enumerate(spec.state):  # module state: seeded before each call
        if path in spec.skip:
            continue
        concrete = [env[d] if isinstance(d, str) else d for d in shape]
        expr, _ = base_expr(concrete, dtype, seed * 31 + 1009 + i, tab=tab, seed_of=(31, 1009 + i),
                            shape_text=dims(text_shape(shape)) if tab is not None else None)
        if values and getattr(torch, dtype).is_floating_point:
            expr = f"up({expr})"
        if kind == "buffer_var":
            expr = f"({expr}.abs() + 0.5)"
        if kind == "global":
            out.globals.append(path)
            out.lines.append(f"{path} = {expr}{dev}  # tensor global {dtype} {shown(concrete, shape)}")
        elif kind == "param":
            out.lines.append(f"{path} = torch.nn.Parameter({expr}{dev})  # parameter {dtype} {shown(concrete, shape)}")
        else:
            out.lines.append(f"{path} = {expr}{dev}  # buffer {dtype} {shown(concrete, shape)}")
    for name, value in extra.get("globals", ()):  # scalar globals the program reads
        if name in spec.skip:
            continue
        out.globals.append(name)
        if name not in taken:
            out.lines.append(f"{name} = {value!r}")
    for name in extra.get("rebound", ()):  # globals the program rebinds: unset before each call
        if name in spec.skip:
            continue
        out.globals.append(name)
        out.lines.append(f"{name} = None  # the program rebinds it")
    scope = {"torch": torch, **(tab.values if tab is not None else {})}
    for i, s in enumerate(spec.inputs):  # seeds follow the campaign's input numbering
        name, shape, dtype, layout = s[:4]
        if name in spec.skip:
            continue
        info = s[4] if len(s) > 4 else {}
        kind = info.get("kind", "tensor")
        if kind in ("int", "float"):
            if name not in taken:
                out.lines.append(f"{name} = {scalars[name]!r}")
            continue
        if kind == "alias":
            of = names[info["of"]]
            out.lines.append(f"{name} = {_alias_expr(of, info.get('view', 'same'))}  # a view of {of}")
            continue
        concrete = [env[d] if isinstance(d, str) else d for d in shape]
        special = bool(info.get("special"))
        if kind == "tensor":
            seeds = [(seed * 31 + i, (31, i))]
        else:
            seeds = [((seed * 31 + i) * 7 + j, (217, 7 * i + j)) for j in range(info["count"])]
        exprs = []
        for sd, seed_of in seeds:
            _, base_shape = layout_expr("b", concrete, layout)
            _, text_base = layout_expr("b", text_shape(shape), layout)
            base, salted = base_expr(base_shape, dtype, sd, special and kind == "tensor", tab=tab,
                                     seed_of=seed_of, shape_text=dims(text_base) if tab is not None else None)
            expr, _ = layout_expr(base, text_shape(shape), layout)
            want = runtime.make_input(concrete, dtype, layout, sd, special=special and kind == "tensor")
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
            expr, _ = layout_expr(base + dev, text_shape(shape), layout)
            exprs.append(expr)
            if tab is None:
                note = f"  # {dtype} {tuple(want.shape)}, strides {tuple(want.stride())}"
            else:
                note = f"  # {dtype} {shown(concrete, shape)}"
            if layout != "contiguous":
                note += f"{':' if tab is None else ','} {_LAYOUT_WORDS.get(layout, layout)}"
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


class Inputs:
    """What ``inputs_fn`` wrote: the lines of ``def inputs(...)``, the module-level table they read
    (``table``, empty without one), the names requiring grad, whether it takes ``fp64``, whether
    it uses the ``salt`` helper, and whether it reads ``SEEDS[call]``."""

    def __init__(self, lines, table, rg, fp64, salt, seeds):
        self.lines, self.table, self.rg, self.fp64, self.salt, self.seeds = lines, table, rg, fp64, salt, seeds


def _tail(spec, extra: dict, built: Built, names: list, ind: str) -> list:
    """One call's block: its lines (under inference mode where the call's inputs are inference
    tensors), its dynamic marks and the return."""
    body = []
    if extra.get("inference_inputs"):
        body.append(f"{ind}with torch.inference_mode():  # inference tensors")
        body += [f"{ind}    {ln}" for ln in built.lines]
    else:
        body += [f"{ind}{ln}" for ln in built.lines]
    for name, dim, how in extra.get("marks", ()):
        if name not in names:  # as the runtime does: a mark on an input the program lost is no call
            continue
        fn = "maybe_mark_dynamic" if how == "maybe" else "mark_dynamic"
        body.append(f"{ind}torch._dynamo.{fn}({name}, {dim})")
    return body + [f"{ind}return [{', '.join(names)}]"]


def _one_block(spec, values: bool, names: list, seeds_table: bool, out: list, body: list,
               fp64: bool) -> Inputs | None:
    """``inputs(call)`` as one block, what changes between calls taken from a ``CALLS`` table
    (``out``: the ``def`` line, ``body``: the lines before the inputs), where that block builds
    every call's inputs bitwise; else None."""
    calls = spec.calls
    extras = [c[2] if len(c) > 2 else {} for c in calls]
    columns: list[tuple[str, list]] = []  # (name, value per call) of what changes
    taken_names = set(names) | {p for p, *_ in spec.state} | {"seed", "call", "fp64", "up", "SEEDS", "CALLS"}
    sizes = {}
    for k, sym in enumerate(spec.symbols):
        vals = [c[0][k] for c in calls]
        if len(set(vals)) > 1:
            if sym in taken_names:
                return None
            sizes[sym] = sym
            columns.append((sym, vals))
        else:
            sizes[sym] = vals[0]
    scalar_names = []
    for name in dict.fromkeys([n for e in extras for n, _ in e.get("scalars", ())] +
                              [n for e in extras for n, _ in e.get("globals", ())]):
        if name in spec.skip:
            continue
        vals = []
        for e in extras:
            d = dict(e.get("scalars", ())) | dict(e.get("globals", ()))
            if name not in d:
                return None
            vals.append(d[name])
        if len(set(map(repr, vals))) > 1:
            columns.append((name, vals))
            scalar_names.append(name)
    seeds = [c[1] for c in calls]
    seeded = len(set(seeds)) > 1
    blocks, built0 = [], None
    for k, (entry, extra) in enumerate(zip(calls, extras)):
        vals = {n: v[k] for n, v in columns} | ({"seed": seeds[k]} if seeded else {})
        tab = Table(sizes, seeded, set(scalar_names), vals, seeds[k])
        try:
            built = input_lines(spec, entry, values, tab)
        except (Unsupported, KeyError, TypeError, ValueError):
            return None
        built0 = built0 or built
        blocks.append(_tail(spec, extra, built, names, "    "))
    if any(b != blocks[0] for b in blocks[1:]):
        return None  # the calls differ in more than sizes, scalars and seeds
    text = "\n".join(blocks[0])
    used = [(n, v) for n, v in columns if re.search(rf"\b{re.escape(n)}\b", text) or n in scalar_names]
    words = [("the size " if n in sizes else "") + n for n, _ in used]
    seeded = seeded and bool(re.search(r"\bseed\b", text))
    if seeded and not seeds_table:  # the seed is one more column
        used.append(("seed", seeds))
        words.append("the values' seed")
    table, unpack = [], []
    if used:
        rows = used[0][1] if len(used) == 1 else [tuple(v[k] for _, v in used) for k in range(len(calls))]
        table = [f"CALLS = {tuple(rows)!r}  # per call: {', '.join(words)}"]
        unpack = [f"    {', '.join(n for n, _ in used)} = CALLS[call]"]
    if seeded and seeds_table:
        unpack.append("    seed = SEEDS[call]  # the values' seed")
    gnames = list(dict.fromkeys(built0.globals))
    head = [f"    global {', '.join(gnames)}  # the program's globals: set before each call"] if gnames else []
    return Inputs(out + head + body + unpack + blocks[0], table, built0.rg, fp64, built0.salt,
                  seeded and seeds_table)


def inputs_fn(spec, values: bool, seeds_table: bool = False) -> Inputs:
    """``def inputs(...)``: one block for every call where the calls differ only in sizes,
    scalars and seeds (a ``CALLS`` table) and that is the shorter file, else one ``if call == k:``
    block per call. ``seeds_table``: the file has a ``SEEDS`` table anyway (the block reads the
    call's seed from it)."""
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
    blocks = _per_call(spec, values, names, out, body, fp64)
    single = _one_block(spec, values, names, seeds_table, out, body, fp64) if many else None
    # the table costs its lines and two blank ones after it
    if single is not None and len(single.lines) + len(single.table) + 2 * bool(single.table) < len(blocks.lines):
        return single
    return blocks


def _per_call(spec, values: bool, names: list, out: list, body: list, fp64: bool) -> Inputs:
    """``inputs(call)`` as one ``if call == k:`` block per call (the last one unguarded)."""
    out, body = list(out), list(body)
    many = len(spec.calls) > 1
    rg_all: list[str] = []
    gnames: list[str] = []
    salt = False
    for k, entry in enumerate(spec.calls):
        built = input_lines(spec, entry, values)
        rg_all = rg_all or built.rg
        salt = salt or built.salt
        gnames += [g for g in built.globals if g not in gnames]
        extra = entry[2] if len(entry) > 2 else {}
        last = not many or k == len(spec.calls) - 1
        if not last:
            body.append(f"    if call == {k}:")
        body += _tail(spec, extra, built, names, "    " if last else "        ")
    if gnames:
        out.append(f"    global {', '.join(gnames)}  # the program's globals: set before each call")
    return Inputs(out + body, [], rg_all, fp64, salt, False)
