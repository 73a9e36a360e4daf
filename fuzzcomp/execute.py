"""Run one Case eager, eager again, in fp64 and compiled, inside a worker.

Contract: ``observe(case, options=...)`` returns an ``Observation`` and never
raises for anything the program or the compiler does (those are data);
``add_perturbed`` adds perturbed eager runs to an observation. ``check(case)``
runs the whole execute-then-judge step a worker performs for one case, and
``localise(case, verdict)`` (from ``ladder``) re-runs a finding on the backend
ladder on request; ``check`` already gives every finding the ladder's stage.
Under a CUDA-graph mode each compiled call starts a new CUDA-graph step
(``cudagraph_mark_step_begin``) and grads are the call's own (set to None
before it, parameters included), as in a training loop. Global torch state the oracles depend on
(``fallback_random``, the RNG, ``emulate_precision_casts`` in strict mode) is
set here.

Per call every run records outputs, inputs after the call, which inputs each
output shares storage with, and (when some input requires grad) the grads of
the backward of a fixed seeded loss. Which inputs require grad
(``ExecOptions.grad``): ``"ir"`` honours ``Input.requires_grad``; ``"auto"``
(the default) adds every float input the program never mutates in place,
and drops gradients for the case when eager itself fails in backward (the
drop is counted in ``stats["grad"]``); ``"off"`` disables them. After the
first compiled pass the whole schedule is replayed on the same compiled
function: ``stats`` gets compile events, the bound predicted by
``recompiles.max_compile_events``, replay compiles, guard-failure and
graph-break reasons and whether the recompile limit was hit.

Timing and phases: ``Observation.timings`` holds ``eager`` (eager, eager
again, fp64), ``compile`` (inside Dynamo's compilations, measured with its
compile-start/end callbacks, lazy backward compiles included) and ``compiled
run`` (the compiled pass minus compile). ``set_phase_listener(fn)`` gets each
phase change ("eager", "compile", "run", "judge"); the worker forwards them to
the parent, which holds each compilation and each run to its own timeout.
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, replace

import torch

from fuzzcomp.generators import Case, emit
from fuzzcomp.generators.ir import op_names
from fuzzcomp.oracles import CallRecord, Observation, judge, needs_perturbation, notes
from fuzzcomp.oracles.verdict import Verdict

from .backends import resolve_backend
from .ladder import LADDER, bisect_inductor, localise, same_symptom  # noqa: F401  (re-exported)
from .reach_glue import caller_induced, call_extra, dynamo_config, input_info, library_state_specs, reach_stats
from .recompiles import max_compile_events
from .runtime import load_state, make_inputs, run_call, run_scheduled

PERTURB_EPS = 4.0     # perturbed runs move float inputs by this many machine epsilons
PERTURB_DRAWS = 2


@dataclass(frozen=True)
class ExecOptions:
    grad: str = "auto"             # "auto" | "ir" | "off"
    aliases: bool = True           # compare output-aliases-input relations
    replay: bool = True            # replay the schedule and check compile counts
    strict_precision: bool = False  # emulate_precision_casts, half values judged against eager
    cross_device: bool = True      # on CUDA, also judge compiled against CPU eager
    ladder: bool = True            # findings get their stage from the backend ladder (see ladder.py)
    culprit: bool = True           # value findings get a culprit op (see culprit.py)


DEFAULT_OPTIONS = ExecOptions()


def configure_torch() -> None:
    """Settings every worker applies once: RNG parity, quiet single-threaded compiles."""
    import torch._inductor.config as inductor_config
    inductor_config.fallback_random = True
    if hasattr(inductor_config, "compile_threads"):
        inductor_config.compile_threads = 1


def recompile_limit_name() -> str:
    import torch._dynamo.config as dc
    return "recompile_limit" if hasattr(dc, "recompile_limit") else "cache_size_limit"


def load_namespace(case: Case) -> dict:
    """Execute the emitted source; the namespace holds ``fn``, MODEL, globals and helpers."""
    source = emit(case.program)
    namespace = {"torch": torch}
    exec(compile(source, f"<fuzzcomp seed {case.seed}>", "exec"), namespace)
    return namespace


def load_program(case: Case):
    return load_namespace(case)[case.program.name]


def input_specs(case: Case) -> list[tuple]:
    """The runtime's input table: (name, shape, dtype, layout[, info]) per input."""
    specs = []
    names = [i.name for i in case.program.inputs]
    for i in case.program.inputs:
        spec = (i.name, i.type.shape, i.type.dtype, i.layout)
        if i.kind in ("list", "tuple", "dict"):
            spec += ({"kind": i.kind, "count": i.count},)
        elif i.kind in ("int", "float"):
            spec += ({"kind": i.kind},)
        elif i.kind == "alias":
            spec += ({"kind": "alias", "of": names.index(i.alias_of), "view": i.view},)
        elif input_info(i):
            spec += (input_info(i),)
        specs.append(spec)
    return specs


def state_specs(case: Case) -> list[tuple]:
    """The runtime's state table: (path, shape, dtype, param|buffer|global) per state tensor."""
    from fuzzcomp.generators.emit import MODEL_INSTANCE
    out = []

    def module(m, prefix):
        for st in m.state:
            out.append((f"{prefix}.{st.name}", st.type.shape, st.type.dtype, st.kind))
        for attr, sub in m.submodules:
            module(sub, f"{prefix}.{attr}")
    if case.program.module is not None:
        module(case.program.module, MODEL_INSTANCE)
    out += [(g.name, g.type.shape, g.type.dtype, "global") for g in case.program.globals if g.kind == "tensor"]
    return out + library_state_specs(case)


def call_entry(case: Case, call) -> tuple:
    """One call-table row: (sizes, seed) or (sizes, seed, extra) with the non-default call state."""
    extra: dict = {}
    if call.scalars:
        extra["scalars"] = call.scalars
    if call.globals:
        extra["globals"] = call.globals
    if call.grad_mode != "grad":
        extra["grad_mode"] = call.grad_mode
    if call.inference_inputs:
        extra["inference_inputs"] = True
    grads = call.requires_grad if call.requires_grad is not None else \
        tuple(i.name for i in case.program.inputs if i.requires_grad)
    if grads:
        extra["requires_grad"] = grads
    if call.marks:
        extra["marks"] = call.marks
    extra.update(call_extra(case, call))
    return (call.sizes, call.seed, extra) if extra else (call.sizes, call.seed)


#: op families whose results sum many terms (order-dependent rounding): see fp64rule ``reduce_n``
REDUCING_FAMILIES = frozenset({"reduction", "matmul", "nn", "indexing"})


def reduce_n(case: Case, grads: bool) -> int:
    """The most terms one sum of the case can add, bounded by the largest tensor it sees: the
    largest input or state numel over its calls when the program reduces (or gradients are
    checked: backward sums over broadcast dimensions), else 1."""
    from fuzzcomp.generators.registry import FAMILY_OF
    ops = {re.sub(r"\[.*\]$", "", op.split(":", 1)[1] if op.startswith(("branch:", "cond:")) else op)
           for op in op_names(case.program)}
    reduces = grads or any(FAMILY_OF.get(op) in REDUCING_FAMILIES or op.startswith("autocast:")
                           for op in ops)
    if not reduces:
        return 1
    shapes = [spec[1] for spec in input_specs(case)] + [spec[1] for spec in state_specs(case)]
    best = 1
    for call in case.calls:
        env = dict(zip(case.program.symbols, call.sizes))
        for shape in shapes:
            best = max(best, math.prod(env.get(d, 1) if isinstance(d, str) else int(d) for d in shape))
    return best


def _tensor_types(case: Case) -> list:
    """Types of the program's tensors: tensor-like inputs and module state (a scalar input's
    type is only a placeholder)."""
    types = [i.type for i in case.program.inputs if i.kind in ("tensor", "alias", "list", "tuple", "dict")]
    if case.program.module is not None:
        types += [st.type for st in case.program.module.state]
    return types


def coarse_eps(case: Case, cast_eps: float | None = None) -> float:
    """The epsilon of the coarsest float type among the program's tensors and its casts
    (``cast_eps``: ``cast_floor_eps(case)`` when already known): the fp64 rule's floor when the
    fp64 run failed and eager is the only witness."""
    eps = [torch.finfo(getattr(torch, t.dtype)).eps for t in _tensor_types(case) if t.is_float]
    return max(eps + [cast_floor_eps(case) if cast_eps is None else cast_eps])


def cast_floor_eps(case: Case) -> float:
    """The epsilon of the coarsest float type the program itself casts to (explicit casts,
    dtype arguments, autocast regions): the fp64 run stays that coarse there, so the fp64
    rule's floor can be no finer (0.0: nothing below the values' own dtypes)."""
    src = emit(case.program)
    if "bfloat16" in src or "autocast" in src:
        return 2.0 ** -7
    if "float16" in src or ".half()" in src:
        return 2.0 ** -10
    # float32 casts, and integer/bool tensors promoted to the default float type: the fp64 run
    # does not upcast those (integers are not upcast), so its "fp64" values went through float32
    # there; compiled code that keeps more precision (a fused float64 log10) is not a bug
    if "float32" in src or ".float()" in src or any(not t.is_float for t in _tensor_types(case)):
        return 2.0 ** -23
    return 0.0


#: Phase markers sent while a case runs: "eager" before each eager/fp64/perturbed run, "run" before
#: each compiled run, "compile" while Dynamo or the backend compiles (forward, or a lazy backward).
PHASES = ("eager", "compile", "run", "judge")
_phase_listener = None


def set_phase_listener(fn) -> None:
    """``fn(name)`` is called at each phase change (the worker forwards it to the parent); None = off."""
    global _phase_listener
    _phase_listener = fn


def _phase(name: str) -> None:
    if _phase_listener is not None:
        _phase_listener(name)


class _CompileClock:
    """Seconds spent inside Dynamo's compilations (forward, and AOTAutograd's lazy backward)."""

    def __init__(self):
        self.total, self._since = 0.0, None

    def start(self, *_):
        self._since = time.perf_counter()
        _phase("compile")

    def end(self, *_):
        if self._since is not None:
            self.total += time.perf_counter() - self._since
            self._since = None
        _phase("run")


def _watch_compiles() -> _CompileClock | None:
    """Time Dynamo's compilations and mark them as the "compile" phase (through its compile
    callbacks, which ``torch._dynamo.reset()`` clears, so this runs after each reset)."""
    try:
        from torch._dynamo.callback import callback_handler
    except ImportError:  # a torch without compile callbacks: compile and run stay one figure
        return None
    clock = _CompileClock()
    callback_handler.register_start_callback(clock.start)
    callback_handler.register_end_callback(clock.end)
    return clock


def uses_cudagraphs(case: Case) -> bool:
    """Compiled calls are CUDA-graph replays: each call is a new step, as in a training loop."""
    return case.compile.backend == "inductor" and case.compile.mode in ("reduce-overhead", "max-autotune")


def _compile(fn, case: Case):
    spec = case.compile
    kwargs = dict(backend=resolve_backend(spec.backend), dynamic=spec.dynamic, fullgraph=spec.fullgraph)
    if spec.mode and spec.backend == "inductor":
        kwargs["mode"] = spec.mode
    return torch.compile(fn, **kwargs)


def _graph_count() -> int:
    from torch._dynamo.utils import counters
    return int(counters["stats"]["unique_graphs"])


def _captured_calls() -> int:
    """Ops Dynamo has captured into graphs so far in this process (call nodes of every graph it
    compiled): the program size the compiler actually saw, comparable across fuzzers."""
    from torch._dynamo.utils import counters
    return int(counters["stats"]["calls_captured"])


def _reset_dynamo() -> None:
    import torch._dynamo
    from torch._dynamo import utils
    torch._dynamo.reset()
    utils.counters.clear()
    if hasattr(utils, "guard_failures"):
        utils.guard_failures.clear()


def _first_line(text: str) -> str:
    return str(text).strip().splitlines()[0][:200] if str(text).strip() else ""


def _guard_failure_lines() -> list[str]:
    """Every guard-failure reason Dynamo recorded so far (what TORCH_LOGS=recompiles prints), in
    order; a torch without the record gives none."""
    from torch._dynamo import utils
    return [_first_line(r) for rs in list(getattr(utils, "guard_failures", {}).values()) for r in rs]


def _dynamo_reasons() -> dict:
    from torch._dynamo import utils
    guards = [_first_line(r) for rs in getattr(utils, "guard_failures", {}).values() for r in rs]
    breaks = sorted({_first_line(k) for k in utils.counters.get("graph_break", {})})
    unimpl = [k for k in utils.counters.get("unimplemented", {})]
    limit = any("recompile limit" in k or "cache size limit" in k or "cache_size_limit" in k
                for k in unimpl)
    return {"guard_failures": guards[:20], "graph_breaks": breaks[:20], "recompile_limit_hit": limit,
            "recompile_limit_name": recompile_limit_name()}


class _Runner:
    """Builds a call's inputs (and module/global state) and runs it, with the case's gradient set."""

    def __init__(self, case: Case, options: ExecOptions, grad_names=(), namespace=None):
        self.case, self.options = case, options
        self.namespace = namespace if namespace is not None else load_namespace(case)
        self.fn = self.namespace[case.program.name]
        self.specs, self.states = input_specs(case), state_specs(case)
        self.names = [spec[0] for spec in self.specs]
        self.grad_names = frozenset(grad_names)

    def _entry(self, call):
        entry = call_entry(self.case, call)
        return entry[0], entry[1], (entry[2] if len(entry) > 2 else {})

    def inputs(self, call, **kw):
        sizes, seed, extra = self._entry(call)
        env = dict(zip(self.case.program.symbols, sizes))
        load_state(self.namespace, self.states, env, seed, extra, self.case.compile.device)
        return make_inputs(self.specs, env, seed, device=self.case.compile.device, call_extra=extra,
                           requires_grad=self.grad_names, **kw)

    def run(self, f, call, device=None, phase="eager", **kw):
        _phase(phase)
        return run_scheduled(self.namespace, f, self.specs, self.states, self.case.program.symbols,
                             call_entry(self.case, call), device or self.case.compile.device,
                             requires_grad=self.grad_names, aliases=self.options.aliases,
                             grad=self.options.grad != "off",
                             step_begin=uses_cudagraphs(self.case) and phase == "run", **kw)


def _mutated_inputs(case: Case, options: ExecOptions, namespace) -> set[str]:
    """Inputs some call updates in place (their version counter moves), found by plain eager runs."""
    r = _Runner(case, replace(options, aliases=False), namespace=namespace)
    mutated = set()
    for call in case.calls:
        inputs = r.inputs(call)
        before = [x._version if isinstance(x, torch.Tensor) and not x.is_inference() else None
                  for x in inputs]
        run_call(r.fn, inputs, r.names, call.seed)
        mutated |= {n for n, x, v in zip(r.names, inputs, before)
                    if v is not None and x._version != v}
    return mutated


def _overlaps(x) -> bool:
    """Some elements of ``x`` share one memory location (an expanded input, a stride-0 dim)."""
    if not isinstance(x, torch.Tensor) or x.numel() < 2:
        return False
    check = getattr(torch, "_debug_has_internal_overlap", None)
    if check is not None:
        try:
            return int(check(x)) == 1   # 0 no, 1 yes, 2 too hard to tell
        except Exception:  # an exotic tensor the check refuses: fall back to strides
            pass
    return any(st == 0 and n > 1 for st, n in zip(x.stride(), x.shape))


def overlapping_writes(case: Case, options: ExecOptions, namespace) -> list[str]:
    """Inputs whose elements overlap in memory and that some call writes in place: writing into
    overlapping memory is a user error PyTorch documents, so such a case is not judged."""
    r = _Runner(case, replace(options, aliases=False), namespace=namespace)
    over = set()
    for call in case.calls:
        over |= {n for n, x in zip(r.names, r.inputs(call)) if _overlaps(x)}
    if not over:
        return []
    return sorted(over & _mutated_inputs(case, options, namespace))


def grad_inputs(case: Case, options: ExecOptions, namespace) -> set[str]:
    if options.grad == "off":
        return set()
    plain = [i for i in case.program.inputs if i.kind == "tensor"]
    chosen = {i.name for i in plain if i.requires_grad and i.type.is_float}
    if options.grad == "auto":
        floats = {i.name for i in plain if i.type.is_float}
        chosen |= floats - _mutated_inputs(case, options, namespace)
    return chosen


def _eager_pass(fn, case: Case, runner: _Runner) -> list[CallRecord]:
    records = []
    for call in case.calls:
        e, e2 = runner.run(fn, call), runner.run(fn, call)
        ref = runner.run(fn, call, upcast=True) if e.error is None else None
        records.append(CallRecord(e, e2, ref, None))
    return records


def observe(case: Case, eager_only: bool = False, options: ExecOptions = DEFAULT_OPTIONS) -> Observation:
    namespace = load_namespace(case)
    fn = namespace[case.program.name]
    grads = grad_inputs(case, options, namespace)
    runner = _Runner(case, options, grads, namespace)
    floor_eps = cast_floor_eps(case)
    stats: dict = {"graphs_per_call": [], "grad_inputs": sorted(grads), "floor_eps": floor_eps,
                   "reduce_n": reduce_n(case, bool(grads)), "coarse_eps": coarse_eps(case, floor_eps)}
    timings = {"eager": 0.0, "compiled": 0.0}
    t0 = time.perf_counter()
    records = _eager_pass(fn, case, runner)
    stats["grad"] = "on" if grads else "none"
    failed = next((r.eager.error for r in records if r.eager.error), None)
    if grads and failed is not None and not caller_induced(case, records):
        # eager rejects the program with gradients (in backward, or an out= op refusing autograd):
        # in "auto" mode keep the forward checks without gradients, and count the rejection
        in_backward = failed[2].startswith("backward: ")
        stats["grad"] = "rejected-in-backward" if in_backward else "rejected-in-forward"
        stats["backward_error" if in_backward else "grad_forward_error"] = failed[:2]
        if options.grad == "auto":
            plain = _Runner(case, options, (), namespace)
            retry = _eager_pass(fn, case, plain)
            if all(r.eager.error is None for r in retry) or in_backward:
                runner, records = plain, retry
                stats["grad_inputs"] = []
                stats["reduce_n"] = reduce_n(case, False)
    overlapping = overlapping_writes(case, options, namespace)
    if overlapping:
        stats["overlapping_writes"] = overlapping
    stats.update(reach_stats(case, stats, records))  # special values, caller actions, library modules
    if case.compile.device != "cpu" and options.cross_device:
        for rec, call in zip(records, case.calls):
            if rec.eager.error is None:
                rec.cpu_eager = runner.run(fn, call, device="cpu")
    timings["eager"] = time.perf_counter() - t0
    if not eager_only:
        t0 = time.perf_counter()
        _compiled_pass(fn, case, runner, records, stats, options)
        timings["compiled"] = time.perf_counter() - t0
        if "compile_s" in stats:  # split: compilation, and the compiled runs (with their backward)
            timings["compile"] = min(stats.pop("compile_s"), timings["compiled"])
            timings["compiled run"] = timings.pop("compiled") - timings["compile"]
    return Observation(case.compile.backend, records, stats, timings)


def _compiled_pass(fn, case, runner, records, stats, options) -> None:
    import torch._inductor.config as inductor_config
    _reset_dynamo()
    clock = _watch_compiles()
    patch = {"emulate_precision_casts": True} if options.strict_precision and \
        hasattr(inductor_config, "emulate_precision_casts") else {}
    with inductor_config.patch(patch), dynamo_config(case):
        compiled = _compile(fn, case)
        before = graphs0 = _graph_count()
        captured0 = _captured_calls()
        for rec, call in zip(records, case.calls):
            rec.compiled = runner.run(compiled, call, phase="run")
            now = _graph_count()
            stats["graphs_per_call"].append(now - before)
            before = now
        if options.replay and all(r.compiled.error is None for r in records):
            replay, reasons = [], []
            for call in case.calls:
                seen = _guard_failure_lines()
                runner.run(compiled, call, phase="run")
                now = _graph_count()
                replay.append(now - before)
                reasons.append(_guard_failure_lines()[len(seen):] if now > before else [])
                before = now
            stats["replay_graphs_per_call"] = replay
            stats["replay_reasons"] = reasons
            stats["compile_events"] = sum(1 for g in stats["graphs_per_call"] if g > 0)
            stats["max_compile_events"] = max_compile_events(case)
    stats["captured_ops"] = _captured_calls() - captured0
    stats["graphs"] = _graph_count() - graphs0
    stats.update(_dynamo_reasons())
    stats["dynamic"] = case.compile.dynamic
    stats["strict_precision"] = options.strict_precision
    if clock is not None:
        stats["compile_s"] = clock.total


def add_perturbed(case: Case, obs: Observation, draws: int = PERTURB_DRAWS,
                  options: ExecOptions = DEFAULT_OPTIONS) -> None:
    runner = _Runner(case, options, obs.stats.get("grad_inputs", ()))
    fn = runner.fn
    for rec, call in zip(obs.calls, case.calls):
        rec.perturbed = [runner.run(fn, call, perturb=PERTURB_EPS, draw=d) for d in range(draws)]


def audit_eager(case: Case, obs: Observation, calls, options: ExecOptions = DEFAULT_OPTIONS) -> None:
    """Re-run eager for the given call indices under the kernel audit (see kernel_audit)."""
    from .kernel_audit import KernelAudit
    runner = _Runner(case, options, obs.stats.get("grad_inputs", ()))
    for k in sorted(set(calls)):
        with KernelAudit() as audit:
            runner.run(runner.fn, case.calls[k])
        obs.calls[k].eager_kernel_bugs = audit.flagged
        if audit.flagged:
            obs.stats.setdefault("eager_kernel_bugs", [])
            obs.stats["eager_kernel_bugs"] += [f for f in audit.flagged
                                               if f not in obs.stats["eager_kernel_bugs"]]


def _wide_loss(fn):
    """``fn`` returning, besides its result, every intermediate that carries autograd history,
    so backward reaches all a compiled graph's single backward node can (tensors saved for
    backward, tensors live across a graph break)."""
    from torch.overrides import TorchFunctionMode

    class Collect(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(t, torch.Tensor) and t.grad_fn is not None and t.dtype.is_floating_point:
                    self.seen.append(t)
            return out

    def wide(*args):
        mode = Collect()
        with mode:
            result = fn(*args)
        return result, mode.seen
    return wide


def add_wide_eager(case: Case, obs: Observation, calls, options: ExecOptions = DEFAULT_OPTIONS) -> None:
    """Re-run eager for the given calls with the wide loss (``CallRecord.eager_wide``)."""
    runner = _Runner(case, options, obs.stats.get("grad_inputs", ()))
    wide = _wide_loss(runner.fn)
    for k in sorted(set(calls)):
        obs.calls[k].eager_wide = runner.run(wide, case.calls[k])


def check(case: Case, options: ExecOptions = DEFAULT_OPTIONS) -> tuple[Observation, list[Verdict]]:
    """Execute then judge; perturbed eager runs and the eager-kernel audit are added only when
    they could clear a mismatch, eager with the wide loss only after a compiled crash. Findings
    then get their stage from the backend ladder and value findings a culprit op (``options``
    ``ladder``/``culprit``)."""
    obs = observe(case, options=options)
    if not obs.eager_valid:  # why eager refused the program, for the event log's validity figures
        err = next(c.eager.error for c in obs.calls if c.eager.error is not None)
        obs.stats["eager_error"] = f"{err[0]}: {err[1]}"[:200]
        return obs, []
    _phase("judge")
    verdicts = judge(obs)
    crashed = [v.call for v in verdicts if v.symptom in ("compile-crash", "runtime-crash") and v.call >= 0]
    if crashed and options.grad != "off":
        add_wide_eager(case, obs, crashed, options)
        verdicts = judge(obs)
    if needs_perturbation(verdicts):
        t0 = time.perf_counter()
        add_perturbed(case, obs, options=options)
        audit_eager(case, obs, [v.call for v in verdicts if v.oracle in ("fp64-rule", "cross-device")
                                and v.call >= 0], options)
        obs.timings["perturbed"] = time.perf_counter() - t0
        _phase("judge")
        verdicts = judge(obs)
    found_notes = notes(obs)
    if found_notes:
        obs.stats["notes"] = found_notes[:20]
    if verdicts:
        from .halfwitness import half_witness
        verdicts = half_witness(case, obs, verdicts, options)
    if verdicts and (options.ladder or options.culprit):
        from .ladder import attribute
        t0 = time.perf_counter()
        verdicts = attribute(case, obs, verdicts, options)
        obs.timings["ladder"] = time.perf_counter() - t0
    return obs, verdicts


def eager_validity(seeds) -> tuple[int, int, int, list]:
    """Run each seed's case in eager alone: (valid cases, calls whose fp64 run worked, calls of
    valid cases, [(seed, first eager error)] of the invalid ones). Warnings are the programs'."""
    import warnings
    from fuzzcomp.generators import generate
    configure_torch()
    valid = fp64_ok = calls = 0
    errors = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in seeds:
            obs = observe(generate(seed), eager_only=True)
            if obs.eager_valid:
                valid += 1
                for rec in obs.calls:
                    calls += 1
                    fp64_ok += rec.fp64 is not None and rec.fp64.error is None
            else:
                errors.append((seed, next(c.eager.error[:2] for c in obs.calls if c.eager.error)))
    return valid, fp64_ok, calls, errors
