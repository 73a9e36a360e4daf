"""A finding -> the short repro a person writes: the function, plain-torch inputs, one check.

Contract: ``render_short(spec)`` returns the text of a standalone file, or ``None`` when the
case needs more than the short form can say (module state, globals, recompile schedules,
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
    if extra.get("inference_inputs") or extra.get("globals"):
        raise _Unsupported("inference-mode inputs or scalar globals")
    scalars = dict(extra.get("scalars", ()))
    grads = [n for n in dict.fromkeys(tuple(extra.get("requires_grad") or ()) + tuple(spec.requires_grad))]
    lines, rg, names = [], [], [s[0] for s in spec.inputs]
    dev = "" if spec.device == "cpu" else f".to({spec.device!r})"
    for i, s in enumerate(spec.inputs):
        name, shape, dtype, layout = s[:4]
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
            if getattr(torch, dtype).is_floating_point and spec.symptom in ("numeric", "gradient", "mutation"):
                base = f"up({base})"  # the fp64 run upcasts the base, then takes the same view
            expr, _ = _layout_expr(base + dev, concrete, layout)
            exprs.append(expr)
            note = f"  # {dtype} {tuple(want.shape)}, strides {tuple(want.stride())}"
            if layout != "contiguous":
                note += f": {_LAYOUT_WORDS.get(layout, layout)}"
        if name in grads and getattr(torch, dtype).is_floating_point and kind == "tensor":
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


def _render(spec: Spec) -> str:
    if spec.symptom not in _SHORT_SYMPTOMS or spec.state or len(spec.calls) != 1:
        raise _Unsupported(spec.symptom)
    if any(len(c) > 2 and (c[2].get("marks") or c[2].get("grad_mode")) for c in spec.calls):
        raise _Unsupported("dynamic marks or a grad mode")
    entry = spec.calls[0]
    seed = entry[1]
    in_lines, rg = _input_lines(spec, entry)
    names = [s[0] for s in spec.inputs]
    sym = spec.symptom
    values = sym in ("numeric", "gradient", "mutation")
    random = bool(_RANDOM.search(spec.fn_src))
    head = [f'"""{spec.title}', "",
            "Exit 1 while the bug shows, 0 once it is fixed." + (" Needs a CUDA device (exit 3 without)."
                                                                  if spec.device != "cpu" else ""),
            '"""', "import torch"]
    if values:
        head.append(SHORT_MARK)
    if sym in ("compile-crash", "runtime-crash"):
        head.insert(4, "import traceback")
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
    if head[-1] != "":
        head.append("")
    body = ["", spec.fn_src.strip(), "", ""]
    sig = "fp64=False" if values and any(s[2] in _EPS for s in spec.inputs) else ""
    body.append(f"def inputs({sig}):")
    if sig:
        body.append("    def up(t):  # the fp64 reference runs on the same values in float64")
        body.append("        return t.double() if fp64 else t")
    body += ["    " + ln for ln in in_lines]
    body.append(f"    return [{', '.join(names)}]")
    body += ["", ""]
    reseed = f"torch.manual_seed({seed}); " if random else ""
    call = f"torch.compile(fn{_compile_args(spec)})"
    tol = _tol(spec)
    same_args = ", equal_nan=True" + (f", tol={tol:.3g}" if tol else "")
    fp64 = "inputs(fp64=True)" if sig else "inputs()"
    if sym == "numeric":
        body += [f"{reseed}ref = fn(*inputs())", f"{reseed}fp64 = fn(*{fp64})", f"{reseed}res = {call}(*inputs())",
                 f"if not same(ref, res, fp64_ref=fp64{same_args}):",
                 '    print("BUG: compiled output differs from eager beyond the fp64 reference\'s error")',
                 "    raise SystemExit(1)"]
    elif sym == "mutation":
        body += [f"xs, x64, ys = inputs(), {fp64}, inputs()",
                 f"{reseed}fn(*xs)", f"{reseed}fn(*x64)", f"{reseed}{call}(*ys)",
                 f"if not same(xs, ys, fp64_ref=x64{same_args}):",
                 '    print("BUG: an input holds other values after the compiled call than after eager")',
                 "    raise SystemExit(1)"]
    elif sym == "gradient":
        if not rg:
            raise _Unsupported("no input requires grad")
        body += ["", "def grads(f, xs):  # backward of sum(out * w) with fixed weights k/64",
                 f"    {reseed}outs = [o for o in f(*xs) if isinstance(o, torch.Tensor) and o.requires_grad]",
                 f"    ws = [(torch.randint(-64, 65, o.shape, generator=torch.Generator().manual_seed("
                 f"{seed * 7919} + i)) / 64).to(o.dtype) for i, o in enumerate(outs)]",
                 "    torch.autograd.backward(outs, grad_tensors=ws)",
                 f"    return [x.grad for x in xs if isinstance(x, torch.Tensor) and x.requires_grad]", "", "",
                 f"ref, fp64, res = grads(fn, inputs()), grads(fn, {fp64}), grads({call}, inputs())",
                 f"if not same(ref, res, fp64_ref=fp64{same_args}):",
                 '    print("BUG: compiled gradients differ from eager beyond the fp64 reference\'s error")',
                 "    raise SystemExit(1)"]
    elif sym == "aliasing":
        body += ["def shared(outs, xs):  # which inputs each output shares storage with",
                 "    ptr = lambda t: t.untyped_storage().data_ptr()  # noqa: E731",
                 "    return [[ptr(o) == ptr(x) for x in xs if isinstance(x, torch.Tensor)]",
                 "            for o in outs if isinstance(o, torch.Tensor)]", "", "",
                 "xs, ys = inputs(), inputs()",
                 f"{reseed}ref = shared(fn(*xs), xs)", f"{reseed}res = shared({call}(*ys), ys)",
                 "if ref != res:",
                 '    print(f"BUG: outputs share storage with inputs {res} compiled, {ref} in eager")',
                 "    raise SystemExit(1)"]
    else:  # a crash: eager runs the whole call (backward too), compiled raises
        back = ["    outs = [o for o in out if isinstance(o, torch.Tensor) and o.requires_grad]",
                "    torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])"] if rg else []
        body += ["def run(f):", f"    {reseed}out = f(*inputs())"] + back + ["", "",
                 "run(fn)  # eager is fine", "try:", f"    run({call})", "except Exception as e:",
                 "    traceback.print_exc()",
                 '    print(f"BUG: compiled call raised {type(e).__name__}: {str(e).splitlines()[0][:200]}")',
                 "    raise SystemExit(1)"]
    tail = ['print("OK: compiled matches eager")']
    text = "\n".join(head + body + tail) + "\n"
    if spec.footer:
        text += spec.footer.rstrip("\n") + "\n"
    compile(text, "<short repro>", "exec")
    return text


def is_short(text: str) -> bool:
    return "def inputs(" in text and "INPUTS = [" not in text
