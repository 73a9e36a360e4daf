"""A finding -> the short repro a person writes: the function, plain-torch inputs, one check.

Contract: ``render_short(spec)`` returns the text of a standalone file, or ``None`` when the
short form cannot say the case (``short_or_reason`` says why: the caller's actions change
between calls, an input that does not rebuild bitwise...): the caller then writes the long form
(``fuzzcomp.repro``). The file:

* states the bug in a docstring, then the minimised function (dead helpers, statements and
  unused parameters pruned);
* builds every input, the module state and the program's globals in plain torch, bitwise the
  campaign's (``fuzzcomp.shortinputs``);
* compiles with only the non-default settings (and the case's ``torch._dynamo.config``), pins
  one thread on the CPU for value checks, sets ``fallback_random`` (and reseeds) only when the
  program draws random numbers; the caller's actions (autocast, deterministic algorithms, eval
  mode, writes into an output or an input) and per-call grad modes as the campaign made them;
* checks the bucket's symptom once, in the words of PyTorch's own tools: numeric and gradient
  with ``torch._dynamo.utils.same`` against an fp64 run; mutation by the inputs (and buffers)
  after the call; aliasing by storage or view metadata; a torch global by torch's state after
  the call; recompiles by Dynamo's graph counter over the call schedule and its replay; a crash
  by the call itself; error parity by what eager raises; a hang or segfault by the call in a
  child process;
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

from .shortinputs import _EPS, SALT_HELPER, inputs_fn
from .shortinputs import Unsupported as _Unsupported

CASE_PREFIX = "# fuzzcomp-case: "
HANG_S = 120  # a hang's short form: how long the child's calls may take before it says "hung"
SHORT_MARK = "from torch._dynamo.utils import same"
_RANDOM = re.compile(r"\b(rand|randn|randint|randperm|rand_like|randn_like|randint_like|dropout\w*|"
                     r"bernoulli_?|multinomial|normal_|uniform_|rrelu_?|exponential_|geometric_|"
                     r"cauchy_|log_normal_|random_)\b")
SYMPTOMS_SHORT = ("numeric", "gradient", "mutation", "aliasing", "recompile", "compile-crash", "runtime-crash",
                  "error-parity", "hang", "segfault")


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
    config: tuple = ()          # (name, value) of torch._dynamo.config the case compiles under
    max_events: int | None = None  # compile events the call schedule may cost (recompile checks)
    hang_s: int = HANG_S        # a hang's short form: how long the child's calls may take
    prune: bool = True          # drop dead statements, unused parameters, state and globals


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
    """``same``'s tol raised to the campaign's floor (4 eps, ``tol/10`` in ``same``), if above 1e-4.
    At a half-precision floor (tol of 0.01 or more) the file checks with ``close`` instead: ``same``
    tries allclose at that tol first, which would pass any error below 30% for bfloat16."""
    dtypes = {s[2] for s in spec.inputs} | {d for d in _EPS if f"torch.{d}" in spec.fn_src}
    eps = max([spec.floor_eps, _EPS["float32"] * max(1, spec.reduce_n) ** 0.5] +
              [_EPS[d] for d in dtypes if d in ("float16", "bfloat16")])
    tol = min(0.5, 40 * eps)
    return tol if tol > 1e-4 else None


def render_short(spec: Spec) -> str | None:
    """The short file, or None when the short form cannot express this case."""
    return short_or_reason(spec)[0]


def short_or_reason(spec: Spec) -> tuple[str | None, str]:
    """(the short file, "") or (None, why the short form cannot express this case)."""
    try:
        return _render(spec), ""
    except _Unsupported as e:
        return None, str(e)
    except (KeyError, IndexError, TypeError, ValueError, RuntimeError) as e:
        return None, f"renderer: {type(e).__name__}: {e}"


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


_CALLER_SHORT = {"autocast", "deterministic", "mutate_input", "mutate_output", "eval"}


def _caller_actions(spec: Spec) -> tuple[set, list | None]:
    """(every action the caller takes around some call, the actions of each call where they
    change between calls, else None): autocast around the forward, deterministic algorithms on,
    eval mode, a write into the first float output after the call, a write into the first float
    input between forward and backward."""
    per = [tuple((c[2] if len(c) > 2 else {}).get("caller", ()) or ()) for c in spec.calls]
    if "MODEL" not in spec.fn_src:  # eval mode is the model's: a program without one ignores it
        per = [tuple(a for a in acts if a != "eval") for acts in per]
    caller = {a for acts in per for a in acts}
    if caller - _CALLER_SHORT:
        raise _Unsupported(f"caller actions {sorted(caller - _CALLER_SHORT)}")
    return caller, (per if len(set(per)) > 1 else None)


def _caller_input_write(spec: Spec) -> list[str]:
    """The caller's write between forward and backward, as the campaign makes it: the first float
    tensor input (an alias has its base's dtype) times 2 under no_grad, unless its elements overlap
    (an expanded input). An input the program never reads is not in the file: writing it changes
    nothing the program sees, so there is no line."""
    names = [s[0] for s in spec.inputs if s[0] not in spec.skip]
    for s in spec.inputs:
        info = s[4] if len(s) > 4 else {}
        kind = info.get("kind", "tensor")
        dtype = spec.inputs[info["of"]][2] if kind == "alias" else s[2]
        if kind not in ("tensor", "alias") or not getattr(torch, dtype).is_floating_point:
            continue
        if s[0] in spec.skip:
            return []
        layout = spec.inputs[info["of"]][3] if kind == "alias" else s[3]
        if layout == "expanded":
            return []
        return ["with torch.no_grad():  # the caller writes an input between forward and backward",
                f"    xs[{names.index(s[0])}].mul_(2)"]
    return []


def _gstate(spec: Spec) -> bool:
    """The finding is a torch global (grad mode, deterministic algorithms, default dtype) left
    different after the call: the check is torch's state, not values."""
    return spec.symptom == "mutation" and spec.signature.startswith("torch globals")


_MODE_CTX = {"grad": "torch.enable_grad", "no_grad": "torch.no_grad", "inference": "torch.inference_mode"}


def _tensors(leaves: str, cond: str = "") -> str:
    """The expression of a call's output tensors (``leaves``: see ``_leaves``), filtered by ``cond``."""
    return f"[o for o in {leaves} if isinstance(o, torch.Tensor){cond}]"


@dataclass
class _Ctx:
    """What every check of one file shares: how a call is made, and how the helpers are called."""
    spec: Spec
    many: bool          # several calls: inputs(call), and the checks run in a loop
    per_call: bool      # the helpers take ``call`` (a grad mode, seed or weights that change per call)
    reseed: str         # the RNG reset before a call ("" when the program draws no random numbers)
    wrap: str | None    # the contexts the forward runs under (grad mode, the caller's autocast)
    writes: list        # the caller's writes after the forward (an output; an input before backward)
    arg: str            # the argument of inputs() for the fp32 runs
    a64: str            # ... for the fp64 run
    leaves: str = "out"  # the expression listing a call's outputs ``out`` (``_leaves``)
    fn_src: str = ""    # the program as the file has it
    pre: list = field(default_factory=list)  # per-call caller settings made before the call

    @property
    def plain(self) -> bool:
        """A call is just ``f(*xs)``: no RNG reset, context or per-call setting around it."""
        return not (self.reseed or self.wrap or self.pre)

    def call(self, helper: str | None, f: str, a: str | None = None) -> str:
        """``helper(f, inputs(...)[, call])``, or ``f(*inputs(...))`` where there is no helper."""
        a = self.arg if a is None else a
        if helper is None:
            return f"{f}(*inputs({a}))"
        return f"{helper}({f}, inputs({a}){', call' if self.per_call else ''})"

    def helper(self, name: str, doc: str, fwd: list, post: list, pre: list = ()) -> list:
        """``def name(f, xs[, call]):`` with the RNG reset, ``fwd`` under the call's contexts, then
        ``post``."""
        head = f"def {name}(f, xs{', call' if self.per_call else ''}):" + (f"  # {doc}" if doc else "")
        out = [head] + ["    " + ln for ln in list(pre) + self.pre + self.reseed.splitlines()]
        if self.wrap:
            out += [f"    with {self.wrap}:"] + ["        " + ln for ln in fwd]
        else:
            out += ["    " + ln for ln in fwd]
        return out + ["    " + ln for ln in post] + ["", ""]


def _drop_unread_globals(src: str) -> tuple[str, list]:
    """(the source without module-level ``G = None`` globals nothing reads, their names)."""
    import ast
    tree = ast.parse(src)
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    declared = {g for n in ast.walk(tree) if isinstance(n, ast.Global) for g in n.names}
    dead = [n for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name) and n.targets[0].id not in loads | declared
            and isinstance(n.value, ast.Constant) and n.value.value is None]
    if not dead:
        return src, []
    lines = src.splitlines()
    for n in sorted(dead, key=lambda n: -n.lineno):
        del lines[n.lineno - 1:n.end_lineno]
    return re.sub(r"\n{3,}", "\n\n\n", "\n".join(lines)).strip() + "\n", [n.targets[0].id for n in dead]


def _leaves(src: str) -> str:
    """The expression listing a call's outputs ``out``: the program returns a tuple or list, a
    dict, or one tensor (``Model.forward``'s returns tell where ``fn`` calls the model, else
    ``fn``'s own)."""
    import ast
    tree = ast.parse(src)
    model = [f for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "Model"
             for f in c.body if isinstance(f, ast.FunctionDef) and f.name == "forward"]
    top = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "fn"]
    for f in model + top:
        for r in ast.walk(f):
            if isinstance(r, ast.Return) and r.value is not None:
                if isinstance(r.value, (ast.Tuple, ast.List)):
                    return "out"
                if isinstance(r.value, ast.Dict):
                    return "out.values()"
                if not (isinstance(r.value, ast.Call) and "MODEL" in ast.unparse(r.value.func)):
                    return "[out]"
    return "out"


_REGISTER = re.compile(r"^\s*(?:self\.(\w+) = torch\.nn\.Parameter\(|self\.register_buffer\('(\w+)')")


def _drop_unused_state(src: str) -> tuple[str, set]:
    """(the source without parameters and buffers nothing reads, their attribute names): the
    minimiser removes the statements that read them but not their registration."""
    lines = src.splitlines()
    dead = set()
    for ln in lines:
        m = _REGISTER.match(ln)
        name = m and (m.group(1) or m.group(2))
        if name and len(re.findall(rf"\bself\.{name}\b", src)) == (1 if m.group(1) else 0):
            dead.add(name)
    if not dead:
        return src, dead
    kept = [ln for ln in lines if not ((m := _REGISTER.match(ln)) and (m.group(1) or m.group(2)) in dead)]
    return "\n".join(kept) + "\n", dead


def _loss(ctx: _Ctx) -> list[str]:
    """``outs``, what backward starts from, as the campaign's loss: every output carrying grad,
    and every input a program writing in place left with autograd history (a compiled backward
    covers it, so eager's must too)."""
    lines = [f"outs = {_tensors(ctx.leaves, ' and o.requires_grad')}"]
    if _INPLACE.search(ctx.fn_src):
        lines.append("outs += [x for x in xs if isinstance(x, torch.Tensor) and x.grad_fn is not None]"
                     "  # inputs written in place")
    return lines


_INPLACE = re.compile(r"\w_\(|\bout=")


def _weights_seed(ctx: _Ctx) -> str:
    seed = ctx.spec.calls[0][1]
    if ctx.per_call:
        return "SEEDS[call] * 7919 + i"
    return f"{seed * 7919} + i" if seed else "i"


def _state_after(spec: Spec) -> list[str]:
    """Expressions of what the campaign reads after a call besides the inputs: buffers, tensor
    globals and the globals the program rebinds."""
    out = [f"{p}.clone()" for p, _s, _d, kind in spec.state if kind.startswith("buffer") or kind == "global"]
    rebound = {n for c in spec.calls for n in (c[2] if len(c) > 2 else {}).get("rebound", ())}
    return out + sorted(rebound)


def _render(spec: Spec) -> str:
    sym = spec.symptom
    if sym not in SYMPTOMS_SHORT:
        raise _Unsupported(sym)
    extras = [c[2] if len(c) > 2 else {} for c in spec.calls]
    modes = [e.get("grad_mode", "grad") for e in extras]
    caller, per_caller = _caller_actions(spec)
    seeds = [c[1] for c in spec.calls]
    gstate = _gstate(spec)
    values = sym in ("numeric", "gradient", "mutation") and not gstate
    if sym == "gradient" and "grad" not in modes:
        raise _Unsupported("gradients under no_grad")
    fn_src = (prune(spec.fn_src) if spec.prune else spec.fn_src).replace(
        "the runtime sets it before each call", "inputs() sets it before each call")
    names = [x[0] for x in spec.inputs]
    aliased = {names[x[4]["of"]] for x in spec.inputs if len(x) > 4 and x[4].get("kind") == "alias"}
    unused = [n for n in unused_params(fn_src) if n not in aliased and n in names] if spec.prune else []
    fn_src = _drop_params(fn_src, unused)
    fn_src, unread = _drop_unread_globals(fn_src)
    if spec.prune:
        fn_src, dead_state = _drop_unused_state(fn_src)
        unread += [p for p, _s, _d, _k in spec.state if p.rsplit(".", 1)[-1] in dead_state]
    spec.skip = unused + unread
    leaves = _leaves(fn_src)
    random = bool(_RANDOM.search(fn_src))
    many = len(spec.calls) > 1
    per_mode = len(set(modes)) > 1
    per_seed = random and len(set(seeds)) > 1
    per_call = per_mode or per_seed or bool(per_caller) or (many and sym == "gradient")
    seeds_table = per_seed or (per_call and sym == "gradient")  # a SEEDS table: random numbers, weights
    ins = inputs_fn(spec, values, seeds_table=seeds_table)
    inputs_lines, rg, fp64, salt = ins.lines, ins.rg, ins.fp64, ins.salt
    if sym == "gradient" and not rg:
        raise _Unsupported("no input requires grad")
    reseed = ("torch.manual_seed(SEEDS[call])" if per_seed else f"torch.manual_seed({seeds[0]})") if random else ""
    autocast = f"torch.autocast({spec.device.split(':')[0]!r}, dtype=torch.bfloat16" + \
        (', enabled="autocast" in CALLER[call])' if per_caller else ")") if "autocast" in caller else ""

    def when(action: str, lines: list) -> list:  # an action only some calls take
        if not per_caller or not lines:
            return lines
        return [f"if {action!r} in CALLER[call]:"] + ["    " + ln for ln in lines]
    mode_ctx = "MODES[call]()" if per_mode else {"no_grad": "torch.no_grad()",
                                                  "inference": "torch.inference_mode()"}.get(modes[0])
    writes = []
    if "mutate_output" in caller:
        writes += when("mutate_output", [f"for o in {_tensors(leaves, ' and o.is_floating_point()')}[:1]:",
                                         "    o.mul_(2)  # the caller writes the first float output"])
    if "mutate_input" in caller:
        writes += when("mutate_input", _caller_input_write(spec))
    pre = []
    if per_caller and "deterministic" in caller:
        pre.append('torch.use_deterministic_algorithms("deterministic" in CALLER[call])')
    if per_caller and "eval" in caller:
        pre.append('MODEL.train("eval" not in CALLER[call])')
    arg = "call" if many else ""
    ctx = _Ctx(spec, many, per_call, reseed, ", ".join(filter(None, [mode_ctx, autocast])) or None, writes,
               arg, ", ".join(filter(None, [arg, "fp64=True" if fp64 else ""])), leaves, fn_src, pre)

    safe_title = spec.title.replace("\\", "/").replace('"""', "'''")  # a docstring stays one
    head = [f'"""{safe_title}', "",
            ("Exit 1 while the bug shows, 0 once it is fixed." if sym not in ("hang", "segfault") else
             "Exit 1 while the bug shows (the call runs in a child process), 0 once it is fixed.")
            + (" Needs a CUDA device (exit 3 without)." if spec.device != "cpu" else ""), '"""']
    if sym in ("hang", "segfault"):
        head += ["import subprocess", "import sys"]
    if sym in ("compile-crash", "runtime-crash"):
        head.append("import traceback")
    if len(head) > 4:
        head.append("")
    head.append("import torch")
    if spec.config:
        head.append("import torch._dynamo.config")
    if random:
        head.append("import torch._inductor.config")
    if values:
        head.append(SHORT_MARK)
    if sym == "recompile":
        head.append("from torch._dynamo.utils import counters")
    if spec.backend_import:
        head.append(spec.backend_import)
    head.append("")
    if spec.device != "cpu":
        head += ["if not torch.cuda.is_available():", '    print("cannot run here: no CUDA device")',
                 "    raise SystemExit(3)"]
    if values and spec.device == "cpu":
        head.append("torch.set_num_threads(1)  # a parallel sum adds in another order")
    for k, v in spec.config:
        head.append(f"torch._dynamo.config.{k} = {v!r}")
    if random:
        head.append("torch._inductor.config.fallback_random = True  # eager's random numbers")
    if "deterministic" in caller and not per_caller:
        head.append("torch.use_deterministic_algorithms(True)  # the caller's setting")
    if sym == "recompile":
        head.append("torch._logging.set_logs(recompiles=True)  # each recompile's reason goes to stderr")
    if head[-1] != "":
        head.append("")
    tables = []
    if per_mode:
        tables.append(f"MODES = ({', '.join(_MODE_CTX[m] for m in modes)},)  # the grad mode of each call")
    if per_caller:
        tables.append(f"CALLER = {tuple(per_caller)!r}  # what the caller does around each call")
    if seeds_table:
        uses = ["input values"] * ins.seeds + ["random numbers"] * per_seed + \
            ["backward weights"] * (per_call and sym == "gradient")
        tables.append(f"SEEDS = {tuple(seeds)!r}  # the seed of each call: {', '.join(uses)}")
    body = ["", fn_src.strip(), "", ""] + (SALT_HELPER if salt else []) + \
        (ins.table + ["", ""] if ins.table else []) + inputs_lines + ["", ""]
    if tables:
        body = tables + [""] + body
    helpers, check, main_extra = _check(ctx, sym, gstate, fp64, rg)
    if "eval" in caller and not per_caller:
        main_extra = ["MODEL.eval()  # the caller's mode"] + main_extra
    main = main_extra + [f"compiled = torch.compile(fn{_compile_args(spec)})"]
    if sym == "recompile":
        main += check
    elif many:
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


def close_helper(floor: float) -> list[str]:
    """``close(ref, res, fp64)``: ``same``'s fp64 rule (compiled's RMS error against the fp64 run at
    most 3x eager's, plus the campaign's floor) without the allclose ``same`` tries first, which
    at a half-precision tol would pass any error below 30%."""
    return [
        "def close(r, c, f):  # same()'s fp64 rule: compiled's RMS error vs fp64 within 3x eager's + FLOOR",
        "    if isinstance(r, dict):",
        "        return r.keys() == c.keys() and all(close(r[k], c[k], f[k]) for k in r)",
        "    if isinstance(r, (list, tuple)):",
        "        return len(r) == len(c) and all(map(close, r, c, f))",
        "    if not (isinstance(r, torch.Tensor) and r.is_floating_point()):",
        "        return same(r, c, fp64_ref=f, equal_nan=True)",
        "    if same(r, c, fp64_ref=f, equal_nan=True):",
        "        return True",
        "    if c.shape != r.shape or c.dtype != r.dtype or (~c.isfinite() & f.isfinite() & r.isfinite()).any():",
        "        return False  # compiled is non-finite where eager and fp64 are finite",
        "    ok = f.isfinite() & r.isfinite()",
        "    err = [(t.double() - f)[ok].square().mean().sqrt().item() if ok.any() else 0.0 for t in (r, c)]",
        f"    return err[1] <= 3 * err[0] + {floor:.3g}  # FLOOR: 4 eps of the program's coarsest float type",
        "", ""]


def _check(ctx: _Ctx, sym: str, gstate: bool, fp64: bool, rg: list):
    """(helper lines, check lines of one call, lines before ``compiled = ...``) for the symptom."""
    spec, a64 = ctx.spec, ctx.a64
    tol = _tol(spec)
    same_args = ", equal_nan=True" + (f", tol={tol:.3g}" if tol else "")
    coarse = bool(tol and tol >= 1e-2 and fp64)  # a half-precision floor: close(), not a loose same()
    helpers0 = close_helper(tol / 10) if coarse else []

    def fp64_check(a="ref", b="res"):
        return f"if not close({a}, {b}, fp64):" if coarse else f"if not same({a}, {b}, fp64_ref=fp64{same_args}):"
    call_word = "call {call}: " if ctx.many else ""

    def bug(msg):
        return f'    print(f"BUG: {call_word}{msg}")'
    if sym == "numeric":
        helpers = ctx.helper("run", "", ["out = f(*xs)"], ["return out"]) if not ctx.plain else []

        def run(f, a=None):
            return ctx.call("run" if helpers else None, f, a)
        if fp64:
            check = [f"ref, fp64, res = {run('fn')}, {run('fn', a64)}, {run('compiled')}", fp64_check(),
                     bug("compiled output differs from eager beyond the fp64 reference's error"),
                     "    raise SystemExit(1)"]
        else:  # no float input: the fp64 run would be eager again
            check = [f"ref, res = {run('fn')}, {run('compiled')}", f"if not same(ref, res{same_args}):",
                     bug("compiled output differs from eager"), "    raise SystemExit(1)"]
        if spec.signature == "output zero sign":
            # same() compares neither the sign of a zero nor, through it, which infinity 1/x gives
            check += ["for a, b in zip(ref, res):  # same() ignores the sign of zeros and infinities",
                      "    m = (a == 0) | a.isinf() if a.is_floating_point() else a != a",
                      "    bad = torch.signbit(a[m]) != torch.signbit(b[m])",
                      "    if bad.any():",
                      '        print(f"BUG: compiled gives {b[m][bad][0]} where eager gives {a[m][bad][0]}")',
                      "        raise SystemExit(1)"]
        return helpers0 + helpers, check, []
    if gstate:
        # the program changes a torch global (grad mode, deterministic algorithms, the default
        # dtype): the state after the call is the check, reset to the starting state after it
        helpers = ["def state():  # the torch globals a program can change",
                   "    return (torch.is_grad_enabled(), torch.are_deterministic_algorithms_enabled(),",
                   "            torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_default_dtype())",
                   "", ""]
        helpers += ctx.helper("after", "torch's globals after a call, then reset to how they were",
                              ["f(*xs)", "s = state()"],
                              ["torch.set_grad_enabled(start[0])",
                               "torch.use_deterministic_algorithms(start[1], warn_only=start[2])",
                               "torch.set_default_dtype(start[3])", "return s"], pre=["start = state()"])
        check = [f"ref, res = {ctx.call('after', 'fn')}, {ctx.call('after', 'compiled')}",
                 "if ref != res:",
                 bug("torch globals after the call (grad, deterministic, warn_only, default dtype): "
                     "eager {ref}, compiled {res}"), "    raise SystemExit(1)"]
        return helpers, check, []
    if sym == "mutation":
        state = _state_after(spec)
        after = ["xs"] + ([f"[{', '.join(state)}]"] if state else [])
        what = "an input" + (" or buffer" if spec.state else "")
        helpers = ctx.helper("run", "the inputs" + (", buffers and globals" if len(after) > 1 else "")
                             + " after the call", (["out = f(*xs)"] if ctx.writes else ["f(*xs)"]) + ctx.writes,
                             [f"return {' + '.join(after)}"])
        if fp64:
            check = [f"ref, fp64, res = {ctx.call('run', 'fn')}, {ctx.call('run', 'fn', a64)}, {ctx.call('run', 'compiled')}",
                     fp64_check()]
        else:
            check = [f"ref, res = {ctx.call('run', 'fn')}, {ctx.call('run', 'compiled')}",
                     f"if not same(ref, res{same_args}):"]
        check += [bug(f"{what} holds other values after the compiled call than after eager"),
                  "    raise SystemExit(1)"]
        return helpers0 + helpers, check, []
    if sym == "gradient":
        helpers = ctx.helper("grads", "backward of sum(out * w) with fixed weights k/64", ["out = f(*xs)"],
                             ctx.writes + _loss(ctx) + [
                                 "ws = [(torch.randint(-64, 65, o.shape, generator=torch.Generator().manual_seed("
                                 f"{_weights_seed(ctx)})) / 64).to(o) for i, o in enumerate(outs)]",
                                 "torch.autograd.backward(outs, grad_tensors=ws)",
                                 "return [x.grad for x in xs if isinstance(x, torch.Tensor) and x.requires_grad]"])
        check = [f"ref, fp64, res = {ctx.call('grads', 'fn')}, {ctx.call('grads', 'fn', a64)}, "
                 f"{ctx.call('grads', 'compiled')}",
                 "# a grad eager leaves None and compiled gives as zeros is a known, accepted difference",
                 "res = [None if e is None and r is not None and not r.ne(0).any() else r for e, r in zip(ref, res)]",
                 fp64_check(),
                 bug("compiled gradients differ from eager beyond the fp64 reference's error"),
                 "    raise SystemExit(1)"]
        return helpers0 + helpers, check, []
    if sym == "aliasing":
        if spec.signature.startswith("alias meta"):
            # what autograd believes of each output: an output sharing an input's storage that is
            # no view lets an in-place write reach the input behind autograd's back
            name, doc, what = ("meta", "per output: requires_grad, is_leaf, and if it shares an input's "
                               "storage, is it a view", "outputs (requires_grad, is_leaf, is a view of an input)")
            post = ["ptrs = {x.untyped_storage().data_ptr() for x in xs if isinstance(x, torch.Tensor)}",
                    "return [(o.requires_grad, o.is_leaf, o._is_view() if o.untyped_storage().data_ptr() in ptrs "
                    "else None)", f"        for o in {ctx.leaves} if isinstance(o, torch.Tensor)]"]
        else:
            name, doc, what = ("shared", "for each output, which inputs it shares storage with",
                               "outputs share storage with inputs")
            post = ["ptr = lambda t: t.untyped_storage().data_ptr()  # noqa: E731",
                    "return [[ptr(o) == ptr(x) for x in xs if isinstance(x, torch.Tensor)]",
                    f"        for o in {ctx.leaves} if isinstance(o, torch.Tensor)]"]
        helpers = ctx.helper(name, doc, ["out = f(*xs)"], post)
        check = [f"ref, res = {ctx.call(name, 'fn')}, {ctx.call(name, 'compiled')}", "if ref != res:",
                 bug(what + ": {res} compiled, {ref} in eager"), "    raise SystemExit(1)"]
        return helpers, check, []
    if sym == "recompile":
        helpers = ctx.helper("run", "", ["return f(*xs)"], []) if not ctx.plain else []

        def run():
            return ctx.call("run" if helpers else None, "compiled")
        n = len(spec.calls)
        bound = spec.max_events if spec.max_events is not None else n
        check = ["compiles = 0  # calls that compiled a new graph",
                 f"for call in range({n}):" + ("  # the sizes change between calls" if ctx.many else ""),
                 '    before = counters["stats"]["unique_graphs"]', f"    {run()}",
                 '    compiles += counters["stats"]["unique_graphs"] > before']
        if spec.signature.startswith("recompile: replay"):
            check += ['before = counters["stats"]["unique_graphs"]',
                      f"for call in range({n}):  # the same calls again: each has been compiled for already",
                      f"    {run()}", 'if counters["stats"]["unique_graphs"] > before:',
                      '    print(f"BUG: replaying calls it has already seen compiled '
                      '{counters[\'stats\'][\'unique_graphs\'] - before} new graph(s)")', "    raise SystemExit(1)"]
        else:
            check += [f"if compiles > {bound}:",
                      f'    print(f"BUG: {{compiles}} of {n} calls compiled a new graph; their sizes and '
                      f'dtypes need at most {bound}")', "    raise SystemExit(1)"]
        return helpers, check, []
    # a crash, an error only eager raises, a hang or a segfault: eager runs the whole call
    # (backward too), compiled raises, returns where eager raised, hangs or kills the process
    post = list(ctx.writes)
    if rg or "MODEL" in ctx.fn_src:  # backward whenever an output carries grad (a model's parameters too)
        post += _loss(ctx) + ["torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])"]
    helpers = ctx.helper("run", "", ["out = f(*xs)"], post) if post or not ctx.plain else []

    def run(f):
        return ctx.call("run" if helpers else None, f)
    if sym == "error-parity":
        inner = "run(f, *args)" if helpers else "f(*args[0])"
        helpers += ["def error(f, *args):  # what a call raises (forward or backward), else None",
                    "    try:", f"        {inner}",
                    "    except Exception as e:",
                    '        return f"{type(e).__name__}: {(str(e).strip().splitlines() or [\'\'])[0][:200]}"',
                    "    return None", "", ""]
        check = [f"ref, res = {ctx.call('error', 'fn')}, {ctx.call('error', 'compiled')}", "if ref and not res:",
                 bug("eager raises {ref}; the compiled call returns"), "    raise SystemExit(1)"]
        return helpers, check, []
    if sym in ("hang", "segfault"):
        parent = ['if sys.argv[1:] != ["--child"]:  # the calls run in a child process, which the bug kills or hangs',
                  "    try:",
                  '        child = subprocess.run([sys.executable, "-X", "faulthandler", __file__, "--child"], '
                  f"timeout={spec.hang_s})",
                  "    except subprocess.TimeoutExpired:",
                  f'        print("BUG: the compiled call did not return within {spec.hang_s} s")',
                  "        raise SystemExit(1)",
                  "    if child.returncode < 0:",
                  '        print(f"BUG: the compiled call killed the process (signal {-child.returncode})")',
                  "        raise SystemExit(1)",
                  "    raise SystemExit(child.returncode)", ""]
        check = [f"{run('fn')}  # eager is fine", run("compiled")]
        return helpers, check, parent
    check = [f"{run('fn')}  # eager is fine", "try:", f"    {run('compiled')}",
             "except Exception as e:", "    traceback.print_exc()",
             '    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]',
             bug("compiled call raised {type(e).__name__}: {why[0][:200]}"),
             "    raise SystemExit(1)"]
    return helpers, check, []


def is_short(text: str) -> bool:
    return "def inputs(" in text and "INPUTS = [" not in text
