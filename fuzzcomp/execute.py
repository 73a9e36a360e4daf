"""Run one Case eager, eager again, in fp64 and compiled, inside a worker.

Contract: ``observe(case)`` returns an ``Observation`` and never raises for
anything the program or the compiler does (those are data); ``add_perturbed``
adds perturbed eager runs to an observation. ``check(case)`` runs the whole
execute-then-judge step a worker performs for one case. Global torch state the
oracles depend on (``fallback_random``, the RNG) is set here, per call.
"""
from __future__ import annotations

import time

import torch

from fuzzcomp.generators import Case, emit
from fuzzcomp.oracles import CallRecord, Observation, judge, needs_perturbation
from fuzzcomp.oracles.verdict import Verdict

from .backends import resolve_backend
from .runtime import run_scheduled

PERTURB_EPS = 4.0     # perturbed runs move float inputs by this many machine epsilons
PERTURB_DRAWS = 2


def configure_torch() -> None:
    """Settings every worker applies once: RNG parity, quiet single-threaded compiles."""
    import torch._inductor.config as inductor_config
    inductor_config.fallback_random = True
    if hasattr(inductor_config, "compile_threads"):
        inductor_config.compile_threads = 1


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
    return out


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
    return (call.sizes, call.seed, extra) if extra else (call.sizes, call.seed)


def _compile(fn, case: Case):
    spec = case.compile
    kwargs = dict(backend=resolve_backend(spec.backend), dynamic=spec.dynamic, fullgraph=spec.fullgraph)
    if spec.mode and spec.backend == "inductor":
        kwargs["mode"] = spec.mode
    return torch.compile(fn, **kwargs)


def _graph_count() -> int:
    from torch._dynamo.utils import counters
    return int(counters["stats"]["unique_graphs"])


def observe(case: Case, eager_only: bool = False) -> Observation:
    import torch._dynamo
    namespace = load_namespace(case)
    fn = namespace[case.program.name]
    specs, states, symbols = input_specs(case), state_specs(case), case.program.symbols
    device = case.compile.device

    def run(f, call, **kw):
        return run_scheduled(namespace, f, specs, states, symbols, call_entry(case, call), device, **kw)

    timings = {"eager": 0.0, "compiled": 0.0}
    records = []
    t0 = time.perf_counter()
    for call in case.calls:
        e, e2 = run(fn, call), run(fn, call)
        ref = run(fn, call, upcast=True) if e.error is None else None
        records.append(CallRecord(e, e2, ref, None))
    timings["eager"] = time.perf_counter() - t0
    stats = {"graphs_per_call": []}
    if not eager_only:
        torch._dynamo.reset()
        t0 = time.perf_counter()
        compiled = _compile(fn, case)
        before = _graph_count()
        for rec, call in zip(records, case.calls):
            rec.compiled = run(compiled, call)
            now = _graph_count()
            stats["graphs_per_call"].append(now - before)
            before = now
        timings["compiled"] = time.perf_counter() - t0
    return Observation(case.compile.backend, records, stats, timings)


def add_perturbed(case: Case, obs: Observation, draws: int = PERTURB_DRAWS) -> None:
    namespace = load_namespace(case)
    fn = namespace[case.program.name]
    specs, states = input_specs(case), state_specs(case)
    for rec, call in zip(obs.calls, case.calls):
        entry = call_entry(case, call)
        rec.perturbed = [run_scheduled(namespace, fn, specs, states, case.program.symbols, entry,
                                       case.compile.device, perturb=PERTURB_EPS, draw=d)
                         for d in range(draws)]


def check(case: Case) -> tuple[Observation, list[Verdict]]:
    """Execute then judge; perturbed eager runs are added only when they could clear a mismatch."""
    obs = observe(case)
    if not obs.eager_valid:
        return obs, []
    verdicts = judge(obs)
    if needs_perturbation(verdicts):
        t0 = time.perf_counter()
        add_perturbed(case, obs)
        obs.timings["perturbed"] = time.perf_counter() - t0
        verdicts = judge(obs)
    return obs, verdicts
