"""A finding -> the short repro a person writes: the function, plain-torch inputs, one check.

Contract: ``render_short(spec)`` returns the text of a standalone file, or ``None`` when the
short form cannot say the case (``short_or_reason`` says why: the caller's actions change
between calls, an input that does not rebuild bitwise...): the caller then writes the long form
(``fuzzcomp.render.repro``). The file:

* states the bug in a docstring, then the minimised function (dead helpers, statements and
  unused parameters pruned);
* builds every input, the module state and the program's globals in plain torch, bitwise the
  campaign's (``fuzzcomp.render.shortinputs``);
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
import ast
import zlib
from dataclasses import dataclass, field

import torch

from fuzzcomp.base.symptoms import CRASHES, SYMPTOMS, VALUE
from fuzzcomp.render.prune import _RANDOM, prune  # noqa: F401  (prune re-exported)
from fuzzcomp.render.short_checks import CHECKS, _tensors, check_lines, close_helper  # noqa: F401  (close_helper re-exported)
from fuzzcomp.render.shortinputs import inputs_fn, SALT_HELPER, Unsupported as _Unsupported

CASE_PREFIX = "# fuzzcomp-case: "
HANG_S = 120  # a hang's short form: how long the child's calls may take before it says "hung"
SHORT_MARK = "from torch._dynamo.utils import same"


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


#: a statement that sets a torch global and leaves it set, and how a call starts again from the
#: campaign's starting state (a ``with torch.set_grad_enabled(...)`` block restores itself)
_GLOBAL_SETTERS = ((re.compile(r"^\s*torch\.set_grad_enabled\(", re.M), "torch.set_grad_enabled(True)"),
                   (re.compile(r"^\s*torch\.use_deterministic_algorithms\(", re.M),
                    "torch.use_deterministic_algorithms(False)"),
                   (re.compile(r"^\s*torch\.set_default_dtype\(", re.M), "torch.set_default_dtype(torch.float32)"))


def _global_resets(fn_src: str, mode_ctx: str | None) -> list[str]:
    """The lines that start each call from torch's defaults when the program changes a torch
    global and leaves it changed: without them the compiled call ran under the grad mode the
    eager call left (CPU 1508's split repro showed another symptom than the campaign's). A call
    under a grad-mode context gets its grad mode back from the context itself."""
    out = [reset for rx, reset in _GLOBAL_SETTERS
           if rx.search(fn_src) and not (mode_ctx and reset.startswith("torch.set_grad_enabled"))]
    if out:
        out[0] += "  # fn changes it: each call starts from torch's default"
    return out


_MODE_CTX = {"grad": "torch.enable_grad", "no_grad": "torch.no_grad", "inference": "torch.inference_mode"}


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


def _render(spec: Spec) -> str:
    sym = spec.symptom
    if sym not in CHECKS:
        raise _Unsupported(sym)
    in_child = SYMPTOMS[sym].child_process
    extras = [c[2] if len(c) > 2 else {} for c in spec.calls]
    modes = [e.get("grad_mode", "grad") for e in extras]
    caller, per_caller = _caller_actions(spec)
    seeds = [c[1] for c in spec.calls]
    gstate = _gstate(spec)
    values = sym in VALUE and not gstate
    if sym == "gradient" and "grad" not in modes:
        raise _Unsupported("gradients under no_grad")
    keep_inputs = spec.symptom in ("aliasing", "mutation") or spec.symptom not in VALUE
    fn_src = (prune(spec.fn_src, keep_inputs) if spec.prune else spec.fn_src).replace(
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
    if writes and mode_ctx:  # under the call's grad mode, as the campaign wrote (an inference output
        writes = [f"with {mode_ctx}:  # the caller's writes, under the call's grad mode"] + \
            ["    " + ln for ln in writes]  # can only be written inside inference mode)
    pre = [] if gstate else _global_resets(fn_src, mode_ctx)
    if per_caller and "deterministic" in caller:
        pre.append('torch.use_deterministic_algorithms("deterministic" in CALLER[call])')
    if per_caller and "eval" in caller:
        pre.append('MODEL.train("eval" not in CALLER[call])')
    arg = "call" if many else ""
    ctx = _Ctx(spec, many, per_call, reseed, ", ".join(filter(None, [mode_ctx, autocast])) or None, writes,
               arg, ", ".join(filter(None, [arg, "fp64=True" if fp64 else ""])), leaves, fn_src, pre)

    safe_title = spec.title.replace("\\", "/").replace('"""', "'''")  # a docstring stays one
    head = [f'"""{safe_title}', "",
            ("Exit 1 while the bug shows, 0 once it is fixed." if not in_child else
             "Exit 1 while the bug shows (the call runs in a child process), 0 once it is fixed.")
            + (" Needs a CUDA device (exit 3 without)." if spec.device != "cpu" else ""), '"""']
    if in_child:
        head += ["import subprocess", "import sys"]
    if sym in CRASHES:
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
        if "DEVICE" in fn_src:  # factories with no tensor to take their device from name it
            head.append(f"DEVICE = {spec.device!r}")
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
    helpers, check, main_extra = check_lines(ctx, sym, gstate, fp64, rg)
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


def is_short(text: str) -> bool:
    return "def inputs(" in text and "INPUTS = [" not in text
