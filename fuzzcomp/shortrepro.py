"""A finding -> the short repro a person writes: the function, plain-torch inputs, one check.

Contract: ``render_short(spec)`` returns the text of a standalone file, or ``None`` when the
case needs more than the short form can say (scalar globals, recompile schedules,
hangs, segfaults): the caller then writes the long form (``fuzzcomp.repro``). The file:

* states the bug in a docstring, then the minimised function;
* builds every input in plain torch with the campaign's exact values: literal values for at
  most 16 elements, else the seeded expression the campaign's runtime used; non-contiguous
  layouts through the real expression (``.transpose``, slicing, ``expand``, an offset view,
  a view of another input); dtype, shape and strides as comments. ``render_short`` rebuilds
  each input from its own expression and compares it bitwise with ``runtime.make_input``, so
  a rendering slip is caught here and never shipped;
* compiles with only the non-default settings, pins one thread on the CPU for value checks
  and sets ``fallback_random`` (and reseeds) only when the program draws random numbers;
* checks the bucket's symptom once: numeric and gradient with ``torch._dynamo.utils.same``
  against an fp64 run (tolerance raised to the campaign's floor where the program computes in
  a coarse type or sums many terms), mutation by the inputs after the call, aliasing by
  storage, crashes by the call itself;
* exits 1 with one ``BUG:`` line while the bug shows, 0 once fixed, 3 where it cannot run
  (no CUDA device).

The caller still checks the file in a fresh process; a short form that does not reproduce is
replaced by the long one. ``case_line``/``case_from_text`` carry the full case in one trailing
machine-readable comment so ``fuzzcomp replay`` can judge the file with the full oracle.
"""
from __future__ import annotations

import base64
import json
import re
import zlib
from dataclasses import dataclass, field

import torch

CASE_PREFIX = "# fuzzcomp-case: "
SHORT_MARK = "from torch._dynamo.utils import same"
_RANDOM = re.compile(r"\b(rand|randn|randint|randperm|rand_like|randn_like|randint_like|dropout\w*|"
                     r"bernoulli_?|multinomial|normal_|uniform_|rrelu_?|exponential_|geometric_|"
                     r"cauchy_|log_normal_|random_)\b")
_SHORT_SYMPTOMS = ("numeric", "gradient", "mutation", "aliasing", "compile-crash", "runtime-crash")
_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}
_CAST = {"float32": ".float()", "float64": ".double()", "float16": ".half()", "bfloat16": ".bfloat16()"}


@dataclass
class Spec:
    """What the short form needs, in the runtime's own tables (so old long files convert too)."""
    fn_src: str                 # emitted program: defines fn (and any helpers it calls)
    inputs: list                # runtime input specs (name, shape, dtype, layout[, info])
    calls: list                 # call entries (sizes, seed[, extra])
    symbols: tuple
    symptom: str
    title: str                  # one line: what goes wrong
    compile: dict = field(default_factory=dict)   # backend/dynamic/fullgraph/mode as given
    device: str = "cpu"
    requires_grad: list = field(default_factory=list)
    floor_eps: float = 0.0
    reduce_n: int = 1
    state: list = field(default_factory=list)
    backend_import: str = ""    # an import line for a custom backend, else ""
    footer: str = ""            # e.g. the machine-readable case line
    skip: list = field(default_factory=list)      # inputs fn never reads: built by no line
    signature: str = ""         # the bucket's signature: "torch globals: ..." checks torch's globals


# ---- the embedded case ---------------------------------------------------------------------------
def case_line(case_json: dict) -> str:
    blob = base64.b64encode(zlib.compress(json.dumps(case_json, sort_keys=True).encode(), 9)).decode()
    return CASE_PREFIX + blob


def case_from_text(text: str) -> dict | None:
    for line in reversed(text.splitlines()):
        if line.startswith(CASE_PREFIX):
            try:
                return json.loads(zlib.decompress(base64.b64decode(line[len(CASE_PREFIX):])))
            except (ValueError, zlib.error):
                return None
    return None


# ---- inputs --------------------------------------------------------------------------------------
def _short_float(v: float, dtype: torch.dtype) -> str:
    """The shortest decimal that rounds back to ``v`` in ``dtype``."""
    if v != v or v in (float("inf"), float("-inf")):
        return f"float({str(v)!r})"
    for p in range(1, 18):
        s = f"{v:.{p}g}"
        if torch.tensor(float(s), dtype=dtype).item() == v:
            return s if any(c in s for c in ".en") else s + ".0"
    return repr(v)


def _literal(t: torch.Tensor) -> str:
    if t.dtype.is_floating_point:
        def fmt(x):
            return [fmt(y) for y in x] if isinstance(x, list) else _Raw(_short_float(x, t.dtype))
        body = repr(fmt(t.tolist()))
    elif t.dtype == torch.bool:
        body = repr(t.tolist())
    else:
        body = repr(t.tolist())
    return f"torch.tensor({body}, dtype=torch.{str(t.dtype).split('.')[-1]})"


class _Raw(str):
    def __repr__(self):
        return str(self)


def _dims(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _base_expr(shape, dtype: str, seed: int) -> str:
    """The expression for ``runtime._base_values(shape, dtype, seed)`` (or its literal)."""
    from . import runtime
    t = runtime._base_values(tuple(shape), dtype, seed, 0.0, 0)
    if t.numel() <= 16:
        return _literal(t)
    gen = f"generator=torch.Generator().manual_seed({seed})"
    if dtype == "bool":
        return f"torch.randint(0, 2, {_dims(shape)}, {gen}).bool()"
    if getattr(torch, dtype).is_floating_point:
        cast = _CAST.get(dtype, f".to(torch.{dtype})")
        return f"(torch.rand({_dims(shape)}, {gen}, dtype=torch.float64) * 4 - 2){cast}"
    lo = 0 if dtype == "uint8" else -8
    return f"torch.randint({lo}, 9, {_dims(shape)}, {gen}).to(torch.{dtype})"


def _layout_expr(base: str, shape, layout: str) -> tuple[str, list]:
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
        return f"{base}.expand{_dims(shape)}", base_shape
    if layout == "offset":
        n = 1
        for d in shape:
            n *= d
        return f"{base}[3:].view{_dims(shape)}", [n + 3]
    if layout == "channels_last":
        return f"{base}.contiguous(memory_format=torch.channels_last)", base_shape
    return base, base_shape


_LAYOUT_WORDS = {"transposed": "a transposed view", "sliced": "every other column",
                 "expanded": "expanded from size 1", "offset": "a view at storage offset 3",
                 "channels_last": "channels-last"}


class _Unsupported(Exception):
    pass


def _input_lines(spec: Spec, entry) -> tuple[list[str], list[str]]:
    """(lines building each input inside ``inputs()``, names of the inputs that require grad)."""
    from . import runtime
    sizes, seed = entry[0], entry[1]
    extra = entry[2] if len(entry) > 2 else {}
    env = dict(zip(spec.symbols, sizes))
    if extra.get("globals"):
        raise _Unsupported("scalar globals")
    scalars = dict(extra.get("scalars", ()))
    grads = [n for n in dict.fromkeys(tuple(extra.get("requires_grad") or ()) + tuple(spec.requires_grad))]
    lines, rg, names = [], [], [s[0] for s in spec.inputs]
    dev = "" if spec.device == "cpu" else f".to({spec.device!r})"
    values = spec.symptom in ("numeric", "gradient", "mutation") and not _gstate(spec)
    for i, (path, shape, dtype, kind) in enumerate(spec.state):  # module state: seeded before each call
        concrete = [env[d] if isinstance(d, str) else d for d in shape]
        expr = _base_expr(concrete, dtype, seed * 31 + 1009 + i)
        if values and getattr(torch, dtype).is_floating_point:
            expr = f"up({expr})"
        target = f"globals()[{path!r}]" if kind == "global" else f"{path}.data"
        lines.append(f"{target} = {expr}{dev}  # {kind} {dtype} {tuple(concrete)}")
    for i, s in enumerate(spec.inputs):  # seeds follow the campaign's input numbering
        name, shape, dtype, layout = s[:4]
        if name in spec.skip:
            continue
        info = s[4] if len(s) > 4 else {}
        kind = info.get("kind", "tensor")
        if kind in ("int", "float"):
            lines.append(f"{name} = {scalars[name]!r}")
            continue
        if kind == "alias":
            of, view = names[info["of"]], info.get("view", "same")
            expr = of if view == "same" else f"{of}.transpose(-1, -2)" if view == "transposed" \
                else f"{of}.view({of}.shape)"
            lines.append(f"{name} = {expr}  # a view of {of}")
            continue
        concrete = [env[d] if isinstance(d, str) else d for d in shape]
        seeds = [seed * 31 + i] if kind == "tensor" else [(seed * 31 + i) * 7 + j for j in range(info["count"])]
        exprs = []
        for sd in seeds:
            _, base_shape = _layout_expr("b", concrete, layout)
            base = _base_expr(base_shape, dtype, sd)
            expr, _ = _layout_expr(base, concrete, layout)
            want = runtime.make_input(concrete, dtype, layout, sd)
            got = eval(expr, {"torch": torch})  # noqa: S307 - our own expression, checked bitwise
            if got.shape != want.shape or got.stride() != want.stride() or got.dtype != want.dtype or \
                    not bool(((got == want) | (got != got) & (want != want)).all()):
                raise _Unsupported(f"input {name} does not rebuild bitwise")
            if getattr(torch, dtype).is_floating_point and values:
                base = f"up({base})"  # the fp64 run upcasts the base, then takes the same view
            expr, _ = _layout_expr(base + dev, concrete, layout)
            exprs.append(expr)
            note = f"  # {dtype} {tuple(want.shape)}, strides {tuple(want.stride())}"
            if layout != "contiguous":
                note += f": {_LAYOUT_WORDS.get(layout, layout)}"
        if name in grads and getattr(torch, dtype).is_floating_point and kind == "tensor" and \
                not extra.get("inference_inputs"):
            exprs = [f"{exprs[0]}.requires_grad_()"]
            rg.append(name)
            note += ", requires grad"
        if kind == "tensor":
            value = exprs[0]
        elif kind == "dict":
            value = "{" + ", ".join(f"'k{j}': {e}" for j, e in enumerate(exprs)) + "}"
        else:
            value = ("[" if kind == "list" else "(") + ", ".join(exprs) + ("]" if kind == "list" else ",)")
        lines.append(f"{name} = {value}{note}")
    return lines, rg


# ---- the file ------------------------------------------------------------------------------------
def _compile_args(spec: Spec) -> str:
    c, args = spec.compile, []
    b = c.get("backend", "inductor")
    if b != "inductor":
        args.append(f"backend={b}" if spec.backend_import else f"backend={b!r}")
    if c.get("dynamic") is not None:
        args.append(f"dynamic={c['dynamic']!r}")
    if c.get("fullgraph"):
        args.append("fullgraph=True")
    if c.get("mode") and b == "inductor":
        args.append(f"mode={c['mode']!r}")
    return "".join(", " + a for a in args)


def _tol(spec: Spec) -> float | None:
    """``same``'s tol raised to the campaign's floor (4 eps, ``tol/10`` in ``same``), if above 1e-4."""
    dtypes = {s[2] for s in spec.inputs} | {d for d in _EPS if f"torch.{d}" in spec.fn_src}
    eps = max([spec.floor_eps, _EPS["float32"] * max(1, spec.reduce_n) ** 0.5] +
              [_EPS[d] for d in dtypes if d in ("float16", "bfloat16")])
    tol = min(0.5, 40 * eps)
    return tol if tol > 1e-4 else None


def render_short(spec: Spec) -> str | None:
    """The short file, or None when the short form cannot express this case."""
    try:
        return _render(spec)
    except (_Unsupported, KeyError, IndexError, TypeError, ValueError, RuntimeError):
        return None


def unused_params(src: str) -> list[str]:
    """Parameters of ``fn`` its body never reads."""
    import ast
    for node in ast.parse(src).body:
        if isinstance(node, ast.FunctionDef) and node.name == "fn":
            read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            return [a.arg for a in node.args.args if a.arg not in read]
    return []


def _drop_params(src: str, names: list[str]) -> str:
    m = re.search(r"^def fn\(([^)]*)\):", src, re.M)
    if not m or not names:
        return src
    kept = [a.strip() for a in m.group(1).split(",") if a.strip() and a.strip() not in names]
    return src[:m.start()] + f"def fn({', '.join(kept)}):" + src[m.end():]


def prune(src: str) -> str:
    """Drop what the minimiser can leave behind: loops over ``range(0)`` and top-level helper
    functions nothing calls."""
    import ast
    while True:
        tree = ast.parse(src)
        empty = [n for n in ast.walk(tree) if isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
                 and getattr(n.iter.func, "id", "") == "range" and len(n.iter.args) == 1
                 and isinstance(n.iter.args[0], ast.Constant) and n.iter.args[0].value == 0 and not n.orelse]
        reads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        lines = src.splitlines()
        dead_stmts = [st for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for st in f.body
                      if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                      and st.targets[0].id not in reads and len(f.body) > 2
                      and not re.search(r"_\(|\bout=|manual_seed", ast.get_source_segment(src, st.value) or "_(")
                      and not _RANDOM.search(ast.get_source_segment(src, st.value) or "")]
        if empty or dead_stmts:  # a value nothing reads, computed without side effects: dead
            n = (empty or dead_stmts)[0]
            del lines[n.lineno - 1:n.end_lineno]
            src = "\n".join(lines) + "\n"
            continue
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        dead = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != "fn" and n.name not in used]
        if not dead:
            return src
        lines = src.splitlines()
        for n in sorted(dead, key=lambda n: -n.lineno):
            start = min([n.lineno] + [d.lineno for d in n.decorator_list]) - 1
            del lines[start:n.end_lineno]
        src = re.sub(r"\n{3,}", "\n\n\n", "\n".join(lines)).strip() + "\n"


def _inputs_fn(spec: Spec, values: bool) -> tuple[list[str], list[str], bool]:
    """(lines of ``def inputs(...)``, names requiring grad, whether it takes ``fp64``)."""
    names = [s[0] for s in spec.inputs if s[0] not in spec.skip]
    fp64 = values and (any(s[2] in _EPS for s in spec.inputs
                           if s[0] not in spec.skip and (len(s) < 5 or s[4].get("kind") != "alias"))
                       or any(st[2] in _EPS for st in spec.state))
    many = len(spec.calls) > 1
    params = (["call"] if many else []) + (["fp64=False"] if fp64 else [])
    out = [f"def inputs({', '.join(params)}):"]
    if fp64:
        out += ["    def up(t):  # the fp64 reference runs on the same values in float64",
                "        return t.double() if fp64 else t", ""]
    rg_all: list[str] = []
    for k, entry in enumerate(spec.calls):
        lines, rg = _input_lines(spec, entry)
        rg_all = rg_all or rg
        extra = entry[2] if len(entry) > 2 else {}
        ind = "        " if many and k < len(spec.calls) - 1 else "    "
        if many and k < len(spec.calls) - 1:
            out.append(f"    if call == {k}:")
        if extra.get("inference_inputs"):
            out.append(f"{ind}with torch.inference_mode():  # inference tensors")
            out += [f"{ind}    {ln}" for ln in lines]
        else:
            out += [f"{ind}{ln}" for ln in lines]
        marks = extra.get("marks", ())
        for name, dim, how in marks:
            fn = "maybe_mark_dynamic" if how == "maybe" else "mark_dynamic"
            out.append(f"{ind}torch._dynamo.{fn}({name}, {dim})")
        out.append(f"{ind}return [{', '.join(names)}]")
    return out, rg_all, fp64


_CALLER_SHORT = {"autocast", "deterministic", "mutate_input"}


def _caller_actions(spec: Spec) -> set:
    """The caller's actions around the call (the same for every call), where the short form can
    say them: autocast around the forward, deterministic algorithms on, an input written between
    forward and backward."""
    acts = {tuple((c[2] if len(c) > 2 else {}).get("caller", ()) or ()) for c in spec.calls}
    if len(acts) > 1:
        raise _Unsupported("caller actions change between calls")
    caller = set(acts.pop()) if acts else set()
    if caller - _CALLER_SHORT:
        raise _Unsupported(f"caller actions {sorted(caller - _CALLER_SHORT)}")
    return caller


def _caller_input_write(spec: Spec) -> list[str]:
    """The caller's write between forward and backward, as the campaign makes it: the first float
    tensor input times 2 under no_grad, unless its elements overlap (an expanded input)."""
    names = [s[0] for s in spec.inputs if s[0] not in spec.skip]
    for s in spec.inputs:
        info = s[4] if len(s) > 4 else {}
        if info.get("kind", "tensor") != "tensor" or not getattr(torch, s[2]).is_floating_point:
            continue
        if s[0] in spec.skip or info.get("kind") == "alias" or any(
                len(o) > 4 and o[4].get("kind") == "alias" for o in spec.inputs):
            raise _Unsupported("caller write into an unused or aliased input")
        if s[3] == "expanded":
            return []
        return ["with torch.no_grad():  # the caller writes an input between forward and backward",
                f"    xs[{names.index(s[0])}].mul_(2)"]
    return []


def _gstate(spec: Spec) -> bool:
    """The finding is a torch global (grad mode, deterministic algorithms, default dtype) left
    different after the call: the check is torch's state, not values."""
    return spec.symptom == "mutation" and spec.signature.startswith("torch globals")


def _render(spec: Spec) -> str:
    if spec.symptom not in _SHORT_SYMPTOMS or (spec.state and spec.symptom in ("gradient", "mutation")):
        raise _Unsupported(spec.symptom)  # parameter grads and buffers after the call: the long form
    modes = {(c[2] if len(c) > 2 else {}).get("grad_mode", "grad") for c in spec.calls}
    if len(modes) > 1:
        raise _Unsupported("grad modes change between calls")
    mode = modes.pop()
    caller = _caller_actions(spec)
    seeds = {c[1] for c in spec.calls}
    sym = spec.symptom
    gstate = _gstate(spec)
    values = sym in ("numeric", "gradient", "mutation") and not gstate
    if mode != "grad" and sym == "gradient":
        raise _Unsupported("gradients under no_grad")
    fn_src = prune(spec.fn_src)
    names = [x[0] for x in spec.inputs]
    aliased = {names[x[4]["of"]] for x in spec.inputs if len(x) > 4 and x[4].get("kind") == "alias"}
    unused = [n for n in unused_params(fn_src) if n not in aliased and n in names]
    fn_src = _drop_params(fn_src, unused)
    spec.skip = unused
    random = bool(_RANDOM.search(fn_src))
    if random and len(seeds) > 1:
        raise _Unsupported("random ops reseeded per call")
    seed = spec.calls[0][1]
    inputs_lines, rg, fp64 = _inputs_fn(spec, values)
    many = len(spec.calls) > 1
    safe_title = spec.title.replace("\\", "/").replace('"""', "'''")  # a docstring stays one
    head = [f'"""{safe_title}', "",
            "Exit 1 while the bug shows, 0 once it is fixed." + (" Needs a CUDA device (exit 3 without)."
                                                                  if spec.device != "cpu" else ""),
            '"""']
    head += ["import traceback", ""] if sym in ("compile-crash", "runtime-crash") else []
    head.append("import torch")
    if random:
        head.append("import torch._inductor.config")
    if values:
        head.append(SHORT_MARK)
    if spec.backend_import:
        head.append(spec.backend_import)
    head.append("")
    if spec.device != "cpu":
        head += ["if not torch.cuda.is_available():", '    print("cannot run here: no CUDA device")',
                 "    raise SystemExit(3)"]
    if values and spec.device == "cpu":
        head.append("torch.set_num_threads(1)  # a parallel sum adds in another order")
    if random:
        head.append("torch._inductor.config.fallback_random = True  # eager's random numbers")
    if "deterministic" in caller:
        head.append("torch.use_deterministic_algorithms(True)  # the caller's setting")
    if head[-1] != "":
        head.append("")
    body = ["", fn_src.strip(), "", ""] + inputs_lines + ["", ""]
    reseed = f"torch.manual_seed({seed})\n" if random else ""
    compiled = f"torch.compile(fn{_compile_args(spec)})"
    tol = _tol(spec)
    same_args = ", equal_nan=True" + (f", tol={tol:.3g}" if tol else "")
    arg = "call" if many else ""
    a64 = ", ".join(filter(None, [arg, "fp64=True" if fp64 else ""]))
    wrap = {"no_grad": "torch.no_grad()", "inference": "torch.inference_mode()"}.get(mode)
    # the caller's autocast covers the forward call only, as in the campaign (backward runs after)
    autocast = f"torch.autocast({spec.device.split(':')[0]!r}, dtype=torch.bfloat16)" if "autocast" in caller else ""
    if gstate and caller:
        raise _Unsupported("caller actions around a torch-globals check")
    if autocast and sym not in ("compile-crash", "runtime-crash"):
        # under autocast the fp64 run computes in bfloat16 too: only the campaign's oracle (bf16
        # perturbation steps) judges those values, so the repro is the long form
        raise _Unsupported("values under the caller's autocast")
    fwd_wrap = ", ".join(filter(None, [wrap, autocast])) or None
    writes = _caller_input_write(spec) if "mutate_input" in caller else []
    check: list[str] = []
    helpers: list[str] = []
    if sym == "numeric" and not fp64:  # no float input: the fp64 run would be eager again
        check = [f"ref, res = run(fn, inputs({arg})), run(compiled, inputs({arg}))",
                 f"if not same(ref, res{same_args}):",
                 '    print(f"BUG: call {call}: compiled output differs from eager")' if many else
                 '    print("BUG: compiled output differs from eager")',
                 "    raise SystemExit(1)"]
        helpers = _run_helper(reseed, fwd_wrap, "f(*xs)")
    elif sym == "numeric":
        check = [f"ref, fp64, res = run(fn, inputs({arg})), run(fn, inputs({a64})), run(compiled, inputs({arg}))",
                 f"if not same(ref, res, fp64_ref=fp64{same_args}):",
                 '    print(f"BUG: call {call}: compiled output differs from eager beyond the fp64 reference\'s error")'
                 if many else
                 '    print("BUG: compiled output differs from eager beyond the fp64 reference\'s error")',
                 "    raise SystemExit(1)"]
        helpers = _run_helper(reseed, fwd_wrap, "f(*xs)")
    elif gstate:
        # the program changes a torch global (grad mode, deterministic algorithms, the default
        # dtype): the state after each call is the check, reset to the starting state in between
        helpers = ["def state():  # the torch globals a program can change",
                   "    return (torch.is_grad_enabled(), torch.are_deterministic_algorithms_enabled(),",
                   "            torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_default_dtype())",
                   "", "", "def reset(s):",
                   "    torch.set_grad_enabled(s[0])",
                   "    torch.use_deterministic_algorithms(s[1], warn_only=s[2])",
                   "    torch.set_default_dtype(s[3])", "", ""]
        call = "run({}, inputs(%s))" % arg if reseed or wrap else "{}(*inputs(%s))" % arg
        check = ["start = state()", call.format("fn"), "ref = state()", "reset(start)",
                 call.format("compiled"), "res = state()", "reset(start)",
                 "if ref != res:",
                 '    print(f"BUG: torch globals after the call (grad, deterministic, warn_only, '
                 'default dtype): eager {ref}, compiled {res}")',
                 "    raise SystemExit(1)"]
        if reseed or wrap:
            helpers += _run_helper(reseed, wrap, "f(*xs)")
    elif sym == "mutation":
        check = [f"xs, x64, ys = inputs({arg}), inputs({a64}), inputs({arg})",
                 "run(fn, xs), run(fn, x64), run(compiled, ys)",
                 f"if not same(xs, ys, fp64_ref=x64{same_args}):",
                 '    print("BUG: an input holds other values after the compiled call than after eager")',
                 "    raise SystemExit(1)"]
        helpers = _run_helper(reseed, fwd_wrap, "f(*xs)")
    elif sym == "gradient":
        if not rg:
            raise _Unsupported("no input requires grad")
        helpers = ["def grads(f, xs):  # backward of sum(out * w) with fixed weights k/64"]
        helpers += ["    " + ln for ln in reseed.splitlines()]
        fwd = ["out = f(*xs)"] if not autocast else [f"with {autocast}:", "    out = f(*xs)"]
        helpers += ["    " + ln for ln in fwd + writes]
        helpers += ["    outs = [o for o in out if isinstance(o, torch.Tensor) and o.requires_grad]",
                    "    ws = [(torch.randint(-64, 65, o.shape, generator=torch.Generator().manual_seed("
                    f"{str(seed * 7919) + ' + ' if seed else ''}i)) / 64).to(o.dtype) for i, o in enumerate(outs)]",
                    "    torch.autograd.backward(outs, grad_tensors=ws)",
                    "    return [x.grad for x in xs if isinstance(x, torch.Tensor) and x.requires_grad]", "", ""]
        if many:
            raise _Unsupported("gradients over several calls")
        check = ["ref, fp64, res = grads(fn, inputs()), grads(fn, inputs(" + a64 + ")), grads(compiled, inputs())",
                 "# a grad eager leaves None and compiled gives as zeros is a known, accepted difference",
                 "res = [None if e is None and r is not None and not r.ne(0).any() else r for e, r in zip(ref, res)]",
                 f"if not same(ref, res, fp64_ref=fp64{same_args}):",
                 '    print("BUG: compiled gradients differ from eager beyond the fp64 reference\'s error")',
                 "    raise SystemExit(1)"]
    elif sym == "aliasing":
        if wrap or autocast:
            raise _Unsupported("aliasing under a grad mode or autocast")
        if spec.signature.startswith("alias meta"):
            # what autograd believes of each output: an output sharing an input's storage that is
            # no view lets an in-place write reach the input behind autograd's back
            helpers, check = _alias_check(
                "meta", "per output: requires_grad, is_leaf, and if it shares an input's storage, is it a view",
                ["    ptrs = {x.untyped_storage().data_ptr() for x in xs if isinstance(x, torch.Tensor)}",
                 "    return [(o.requires_grad, o.is_leaf, o._is_view() if o.untyped_storage().data_ptr() in ptrs else None)",
                 "            for o in f(*xs) if isinstance(o, torch.Tensor)]"],
                "outputs (requires_grad, is_leaf, is a view of an input)", reseed, arg)
        else:
            helpers, check = _alias_check(
                "shared", "for each output, which inputs it shares storage with",
                ["    ptr = lambda t: t.untyped_storage().data_ptr()  # noqa: E731",
                 "    return [[ptr(o) == ptr(x) for x in xs if isinstance(x, torch.Tensor)]",
                 "            for o in f(*xs) if isinstance(o, torch.Tensor)]"],
                "outputs share storage with inputs", reseed, arg)
    else:  # a crash: eager runs the whole call (backward too), compiled raises
        helpers = ["def run(f, xs):"]
        fwd = ["out = f(*xs)"] if not autocast else [f"with {autocast}:", "    out = f(*xs)"]
        body_lines = [ln for ln in reseed.splitlines()] + fwd
        if rg and mode == "grad":
            body_lines += writes
            body_lines += ["outs = [o for o in out if isinstance(o, torch.Tensor) and o.requires_grad]",
                           "torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])"]
        if wrap:
            helpers.append(f"    with {wrap}:")
            helpers += ["        " + ln for ln in body_lines]
        else:
            helpers += ["    " + ln for ln in body_lines]
        helpers += ["", ""]
        check = [f"run(fn, inputs({arg}))  # eager is fine", "try:", f"    run(compiled, inputs({arg}))",
                 "except Exception as e:", "    traceback.print_exc()",
                 '    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]',
                 '    print(f"BUG: call {call}: compiled call raised {type(e).__name__}: {why[0][:200]}")' if many else
                 '    print(f"BUG: compiled call raised {type(e).__name__}: {why[0][:200]}")',
                 "    raise SystemExit(1)"]
    if sym == "numeric" and spec.signature == "output zero sign":
        # same() compares neither the sign of a zero nor, through it, which infinity 1/x gives
        check += ["for a, b in zip(ref, res):  # same() ignores the sign of zeros and infinities",
                  "    m = (a == 0) | a.isinf() if a.is_floating_point() else a != a",
                  "    bad = torch.signbit(a[m]) != torch.signbit(b[m])",
                  "    if bad.any():",
                  '        print(f"BUG: compiled gives {b[m][bad][0]} where eager gives {a[m][bad][0]}")',
                  "        raise SystemExit(1)"]
    if helpers in (["def run(f, xs):", "    return f(*xs)", "", ""], ["def run(f, xs):", "    out = f(*xs)", "", ""]):
        # nothing to say: call directly
        helpers = []
        check = [re.sub(r"\brun\((\w+), (inputs\([^)]*\)|\w+)\)", r"\1(*\2)", ln) for ln in check]
    main = [f"compiled = {compiled}"]
    if many:
        main.append(f"for call in range({len(spec.calls)}):  # the sizes change between calls")
        main += ["    " + ln for ln in check]
    else:
        main += check
    tail = ['print("OK: compiled matches eager")']
    text = "\n".join(head + body + helpers + main + tail) + "\n"
    text = re.sub(r"\n{4,}", "\n\n\n", text)
    if spec.footer:
        text += spec.footer.rstrip("\n") + "\n"
    compile(text, "<short repro>", "exec")
    return text


def _alias_check(name: str, doc: str, body: list[str], what: str, reseed: str, arg: str):
    """(helper lines, check lines) comparing ``name(f, xs)`` between eager and compiled."""
    helpers = [f"def {name}(f, xs):  # {doc}"] + ["    " + ln for ln in reseed.splitlines()] + body + ["", ""]
    check = [f"ref, res = {name}(fn, inputs({arg})), {name}(compiled, inputs({arg}))",
             "if ref != res:",
             f'    print(f"BUG: {what}: {{res}} compiled, {{ref}} in eager")',
             "    raise SystemExit(1)"]
    return helpers, check


def _run_helper(reseed: str, wrap: str | None, call: str) -> list[str]:
    if not reseed and not wrap:
        return ["def run(f, xs):", f"    return {call}", "", ""]
    out = ["def run(f, xs):"] + ["    " + ln for ln in reseed.splitlines()]
    if wrap:
        out += [f"    with {wrap}:", f"        return {call}"]
    else:
        out.append(f"    return {call}")
    return out + ["", ""]


def is_short(text: str) -> bool:
    return "def inputs(" in text and "INPUTS = [" not in text
