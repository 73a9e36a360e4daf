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
from .runtime import make_inputs, run_call

PERTURB_EPS = 4.0     # perturbed runs move float inputs by this many machine epsilons
PERTURB_DRAWS = 2


def configure_torch() -> None:
    """Settings every worker applies once: RNG parity, quiet single-threaded compiles."""
    import torch._inductor.config as inductor_config
    inductor_config.fallback_random = True
    if hasattr(inductor_config, "compile_threads"):
        inductor_config.compile_threads = 1


def load_program(case: Case):
    source = emit(case.program)
    namespace = {"torch": torch}
    exec(compile(source, f"<fuzzcomp seed {case.seed}>", "exec"), namespace)
    return namespace[case.program.name]


def input_specs(case: Case) -> list[tuple]:
    return [(i.name, i.type.shape, i.type.dtype, i.layout) for i in case.program.inputs]


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
    fn = load_program(case)
    specs, names = input_specs(case), [i.name for i in case.program.inputs]
    device = case.compile.device
    symbols = case.program.symbols

    def run(f, call, **kw):
        env = dict(zip(symbols, call.sizes))
        return run_call(f, make_inputs(specs, env, call.seed, device=device, **kw), names, call.seed)

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
    fn = load_program(case)
    specs, names = input_specs(case), [i.name for i in case.program.inputs]
    for rec, call in zip(obs.calls, case.calls):
        env = dict(zip(case.program.symbols, call.sizes))
        rec.perturbed = [run_call(fn, make_inputs(specs, env, call.seed, device=case.compile.device,
                                                  perturb=PERTURB_EPS, draw=d), names, call.seed)
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
