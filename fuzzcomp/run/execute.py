"""Run one Case eager, eager again, in fp64 and compiled, inside a worker.

Contract: ``observe(case, options=...)`` returns an ``Observation`` and never
raises for anything the program or the compiler does (those are data);
``add_perturbed`` adds perturbed eager runs to an observation, ``add_caller_reference`` the
reference runs of calls whose caller wrote a tensor eager saved for backward. The whole
execute-then-judge step a worker performs for one case is ``fuzzcomp.judge.check``.
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

import time
from dataclasses import dataclass, replace

import torch

from fuzzcomp.generators import Case
from fuzzcomp.oracles import CallRecord, Observation

from fuzzcomp.base.backends import resolve_backend
from fuzzcomp.run.call_extras import caller_induced, dynamo_config, reach_stats
from fuzzcomp.run.value_floors import output_floor_eps
# the tables and floors of a case, re-exported: the executor's callers read them from here too
from fuzzcomp.run.case_tables import (REDUCING_FAMILIES, _tensor_types, call_entry, cast_floor_eps, mixed_precision_eps,  # noqa: F401
                                      coarse_eps, input_specs, load_namespace, load_program, reduce_n,
                                      state_specs)
from fuzzcomp.run.exact_ref import exact_reference
from fuzzcomp.run.kernel_audit import KernelAudit, ZeroSignAudit
from fuzzcomp.run.norm_jitter import NormJitter
from fuzzcomp.run.recompiles import max_compile_events
from fuzzcomp.run.runtime import fine_entry, load_state, make_inputs, perturb_floor, run_call, run_scheduled

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
    twins: bool = True             # recompile findings get a cause from functional twins (see twins.py)


DEFAULT_OPTIONS = ExecOptions()


def configure_torch() -> None:
    """Settings every worker applies once: RNG parity, quiet single-threaded compiles, and the
    FX-graph and AOTAutograd caches off (a warm-cache case turns them on for itself:
    ``fuzzcomp.workers.warm_cache``)."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    inductor_config.fallback_random = True
    for module, name in ((inductor_config, "fx_graph_cache"), (functorch_config, "enable_autograd_cache")):
        if hasattr(module, name):
            setattr(module, name, False)
    if hasattr(inductor_config, "compile_threads"):
        inductor_config.compile_threads = 1


def recompile_limit_name() -> str:
    import torch._dynamo.config as dc
    return "recompile_limit" if hasattr(dc, "recompile_limit") else "cache_size_limit"


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

    def run(self, f, call, device=None, phase="eager", entry=None, **kw):
        _phase(phase)
        return run_scheduled(self.namespace, f, self.specs, self.states, self.case.program.symbols,
                             entry or call_entry(self.case, call), device or self.case.compile.device,
                             requires_grad=self.grad_names, aliases=self.options.aliases,
                             grad=self.options.grad != "off",
                             step_begin=uses_cudagraphs(self.case) and phase == "run", **kw)

    def reference(self, f, call, **kw):
        """The fp64 reference run: upcast, with float32-accurate float64 eager kernels swapped
        for exact composites (``exact_ref``), so a float64 program has a witness beside eager."""
        with exact_reference(self.case.compile.device):
            return self.run(f, call, upcast=True, **kw)


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


def partial_overlap_ops(case: Case, options: ExecOptions, namespace) -> list[str]:
    """In-place ops of the program whose destination partially overlaps a source (found by one
    watched eager run per call, only for programs that write in place): the documented user
    error eager cannot always detect (``fuzzcomp.run.partial_overlap``)."""
    from fuzzcomp.generators.ir import Mutate, walk_program
    if not any(isinstance(s, Mutate) for s in walk_program(case.program)):
        return []
    from fuzzcomp.run.partial_overlap import watching
    r = _Runner(case, replace(options, aliases=False), namespace=namespace)
    watched, found = watching(r.fn)
    for call in case.calls:
        run_call(watched, r.inputs(call), r.names, call.seed)
    return found


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
        ref = runner.reference(fn, call) if e.error is None else None
        records.append(CallRecord(e, e2, ref, None))
    return records


def observe(case: Case, eager_only: bool = False, options: ExecOptions = DEFAULT_OPTIONS) -> Observation:
    namespace = load_namespace(case)
    fn = namespace[case.program.name]
    grads = grad_inputs(case, options, namespace)
    runner = _Runner(case, options, grads, namespace)
    floor_eps = max(cast_floor_eps(case), mixed_precision_eps(case))
    stats: dict = {"graphs_per_call": [], "grad_inputs": sorted(grads), "floor_eps": floor_eps,
                   "reduce_n": reduce_n(case, bool(grads)), "coarse_eps": coarse_eps(case, floor_eps),
                   "floor_eps_by_label": output_floor_eps(case, floor_eps)}
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
    overlapping = overlapping_writes(case, options, namespace) + partial_overlap_ops(case, options, namespace)
    if overlapping:
        stats["overlapping_writes"] = overlapping
    stats.update(reach_stats(case, stats, records, reduce_n))  # special values, caller actions, library modules
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
            replay, reasons = _replay(runner, compiled, case.calls)
            stats["replay_graphs_per_call"] = replay
            stats["replay_reasons"] = reasons
            if any(replay):  # compiled again: does it settle, or compile on every replay?
                stats["replay2_graphs_per_call"] = _replay(runner, compiled, case.calls)[0]
            stats["compile_events"] = sum(1 for g in stats["graphs_per_call"] if g > 0)
            stats["max_compile_events"] = max_compile_events(case)
    stats["captured_ops"] = _captured_calls() - captured0
    stats["graphs"] = _graph_count() - graphs0
    stats.update(_dynamo_reasons())
    stats["dynamic"] = case.compile.dynamic
    stats["strict_precision"] = options.strict_precision
    if clock is not None:
        stats["compile_s"] = clock.total


def _replay(runner, compiled, calls) -> tuple[list[int], list[list[str]]]:
    """The schedule run once more on the compiled function: the new graphs each call compiled,
    and the guard failures that made them (none where it compiled nothing)."""
    graphs, reasons = [], []
    for call in calls:
        seen, before = _guard_failure_lines(), _graph_count()
        runner.run(compiled, call, phase="run")
        now = _graph_count()
        graphs.append(now - before)
        reasons.append(_guard_failure_lines()[len(seen):] if now > before else [])
    return graphs, reasons


def compile_counts(case: Case, grad_names=(), options: ExecOptions = DEFAULT_OPTIONS) -> dict | None:
    """The compiled pass and its replay alone, no eager run: the compile figures ``stats`` gets in
    ``observe`` (what the recompile oracle reads), or None when a compiled call raised. A
    functional twin is judged this way: only its compile counts matter, never its values."""
    namespace = load_namespace(case)
    options = replace(options, replay=True)
    runner = _Runner(case, options, grad_names, namespace)
    records = [CallRecord(None, None, None, None) for _ in case.calls]
    stats: dict = {"graphs_per_call": []}
    _compiled_pass(namespace[case.program.name], case, runner, records, stats, options)
    if any(r.compiled.error is not None for r in records):
        return None
    return stats


def add_perturbed(case: Case, obs: Observation, draws: int = PERTURB_DRAWS,
                  options: ExecOptions = DEFAULT_OPTIONS) -> None:
    runner = _Runner(case, options, obs.stats.get("grad_inputs", ()))
    fn = runner.fn
    for rec, call in zip(obs.calls, case.calls):
        rec.perturbed = []
        for d in range(draws):
            # normalisations see their mean moved too: a zero-variance row is ill-conditioned
            # where moving the inputs cannot show it (norm_jitter says why)
            with NormJitter(call.seed, d, PERTURB_EPS, perturb_floor(call_entry(case, call))):
                rec.perturbed.append(runner.run(fn, call, perturb=PERTURB_EPS, draw=d))
        rec.perturbed_fine = []
        fine = fine_entry(call_entry(case, call)) if obs.stats.get("floor_eps_by_label") else None
        for d in range(draws if fine is not None else 0):
            with NormJitter(call.seed, d, PERTURB_EPS, 0.0):
                rec.perturbed_fine.append(runner.run(fn, call, perturb=PERTURB_EPS, draw=d, entry=fine))


def _audit_calls(case: Case, obs: Observation, calls, options: ExecOptions, mode, field: str,
                 reach_field: str | None = None) -> None:
    """Re-run eager for the given call indices under the audit ``mode`` (a kernel_audit class);
    each call's ``field`` and ``obs.stats[field]`` list what it flagged (first seen first), and
    its ``reach_field`` the labels of the values a flagged kernel reaches (None: all)."""
    runner = _Runner(case, options, obs.stats.get("grad_inputs", ()))
    for k in sorted(set(calls)):
        with mode() as audit:
            outcome = runner.run(runner.fn, case.calls[k])
        setattr(obs.calls[k], field, audit.flagged)
        if reach_field is not None:
            setattr(obs.calls[k], reach_field, audit.reached(outcome))
        if audit.flagged:
            seen = obs.stats.setdefault(field, [])
            seen += [f for f in audit.flagged if f not in seen]


def audit_eager(case: Case, obs: Observation, calls, options: ExecOptions = DEFAULT_OPTIONS) -> None:
    """Re-run eager for the given call indices under the kernel audit (see kernel_audit)."""
    _audit_calls(case, obs, calls, options, KernelAudit, "eager_kernel_bugs")


def audit_zero_signs(case: Case, obs: Observation, calls, options: ExecOptions = DEFAULT_OPTIONS) -> None:
    """Re-run eager for the given call indices under the zero-sign audit (kernel_audit's
    ``ZeroSignAudit``): ``eager_sign_open`` lists the kernels that give either sign of zero, and
    ``eager_sign_reached`` the values their results reach."""
    _audit_calls(case, obs, calls, options, ZeroSignAudit, "eager_sign_open", "eager_sign_reached")


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
            if torch.compiler.is_compiling():
                # inside a higher-order op (torch.cond traces its branches with Dynamo even in
                # eager, through this mode): reading grad_fn there is a graph break the op
                # refuses, so the wide run failed on every cond program and its compiled crash
                # of the saved-tensor class was filed as a bug (H200 seed 1503004588); the op's
                # outputs are collected outside, where it returns
                return out
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


def add_caller_reference(case: Case, obs: Observation, calls, draws: int = PERTURB_DRAWS,
                         options: ExecOptions = DEFAULT_OPTIONS) -> None:
    """For the given calls, eager with the caller's writes in their reference form
    (``run_call``'s ``caller_ref``: the input write left out, the output write out of place),
    run as the fp64 rule needs (eager, eager again, fp64, perturbed draws), into
    ``CallRecord.caller_ref``: the right answer where eager's backward refuses the real write."""
    runner = _Runner(case, options, obs.stats.get("grad_inputs", ()))
    fn = runner.fn
    for k in sorted(set(calls)):
        call = case.calls[k]
        e, e2 = runner.run(fn, call, caller_ref=True), runner.run(fn, call, caller_ref=True)
        ref = runner.reference(fn, call, caller_ref=True) if e.error is None else None
        rec = CallRecord(e, e2, ref, None)
        if e.error is None:
            for d in range(draws):
                with NormJitter(call.seed, d, PERTURB_EPS, perturb_floor(call_entry(case, call))):
                    rec.perturbed.append(runner.run(fn, call, caller_ref=True, perturb=PERTURB_EPS, draw=d))
        obs.calls[k].caller_ref = rec
