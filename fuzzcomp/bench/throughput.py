"""Rerunnable throughput benchmark over a fixed seed set (``fuzzcomp bench``).

Contract: ``run_bench(opts)`` measures the seeds ``first_seed .. first_seed+seeds-1``
and returns one JSON-able dict (``SCHEMA`` lists its top-level keys); nothing
here asserts on speed. It builds only on stable entry points:
``fuzzcomp.generators.generate``, ``fuzzcomp.judge.check.check`` (in this process,
with timers of our own around the program's calls), ``fuzzcomp.workers.worker.Worker``
(the isolated path the campaign uses) and, in ``bench_campaigns``, the
campaign's ``summary.json`` and ``events.jsonl``.

How the in-process phases are measured (``inprocess``):
- ``torch.compile`` is wrapped for the duration of the run so every compiled
  callable is timed: that is ``compiled`` (compile + run). A compiled call
  during which Dynamo's graph counter grew counts into ``compile``.
- ``run_call`` as bound in ``fuzzcomp.run.execute`` is wrapped so the time inside
  each eager call of the program is timed: calls whose float inputs were
  upcast to float64 are ``fp64``, eager calls after the compiled ones are
  ``perturb``, the rest ``eager``.
- ``harness`` is everything else (generation, input building, output cloning,
  exec of the source, judging, Dynamo resets): worker wall time minus the time
  inside compiled and eager calls. ``overhead`` = harness / wall.
``isolated`` runs the same seeds through one spawned ``Worker`` (unprobed
code), interleaved seed by seed with the in-process pass so both see the same
machine load; each mode has its own fresh Inductor cache folder, so neither
reuses the other's kernels, and each warms up on one extra seed first. CPU
seconds include the waited-for children (Inductor's C++ compiler runs), so
``cases_per_cpu_hour`` compares fairly on a loaded machine where wall time
does not.
"""
from __future__ import annotations

import contextlib
import functools
import os
import resource
import tempfile
import time
from dataclasses import dataclass, field
from dataclasses import asdict
import json
import platform
from fuzzcomp import __version__
from fuzzcomp.base.environ import environ_var
from fuzzcomp.base.messages import CHECK, DONE, Job
from fuzzcomp.bench import campaigns as bench_campaigns
from fuzzcomp.generators import generate, GENERATOR_VERSION
from fuzzcomp.judge.check import check
from fuzzcomp.run import execute
from fuzzcomp.workers.worker import Worker, WorkerSettings

SCHEMA = ("config", "versions", "inprocess", "isolated", "campaign", "recall", "ratios")
PHASES = ("generate", "eager", "fp64", "compiled", "perturb", "harness")


@dataclass(frozen=True)
class BenchOptions:
    seeds: int = 40
    first_seed: int = 0
    backend: str = "inductor"
    isolated: bool = True
    campaign_minutes: float = 0.0     # 0: no campaign
    campaign_backend: str = "inductor"
    campaign_jobs: int = 1
    recall: tuple = ()                # planted backend names; () = no recall run
    recall_cases: int = 40
    case_timeout_s: float = 60.0
    workdir: str | None = None        # where campaign folders go (default: a temp dir)
    profile: str | None = None        # write cProfile stats of the in-process loop here
    dynamic: str = "as-generated"     # or "none" / "true" / "false": override each case's dynamic


@dataclass
class _Tally:
    eager: float = 0.0
    fp64: float = 0.0
    perturb: float = 0.0
    compiled: float = 0.0
    compile: float = 0.0
    compiled_calls: int = 0
    compiling_calls: int = 0
    seen_compiled: bool = False
    compiled_ids: set = field(default_factory=set)
    float_inputs: list = field(default_factory=list)   # per input position: declared dtype


def _graph_counter():
    """Dynamo's unique-graph counter, or None where this torch lacks it."""
    try:
        from torch._dynamo.utils import counters
        return lambda: int(counters["stats"]["unique_graphs"])
    except Exception:  # private API moved: fall back to "first call compiles"
        return None


@contextlib.contextmanager
def _probe(tally_ref: list):
    """Time the program's eager and compiled calls without touching execute's code.

    ``tally_ref[0]`` is the current case's ``_Tally`` (swapped per case).
    """
    import torch
    graphs = _graph_counter()
    real_compile = torch.compile

    def timed_compile(fn=None, *args, **kwargs):
        compiled = real_compile(fn, *args, **kwargs)
        first = [True]

        @functools.wraps(fn)
        def call(*a, **k):
            tally = tally_ref[0]
            tally.seen_compiled = True
            before = graphs() if graphs else None
            t0 = time.perf_counter()
            try:
                return compiled(*a, **k)
            finally:
                dt = time.perf_counter() - t0
                tally.compiled += dt
                tally.compiled_calls += 1
                grew = (graphs() > before) if graphs else first[0]
                first[0] = False
                if grew:
                    tally.compile += dt
                    tally.compiling_calls += 1
        tally_ref[0].compiled_ids.add(id(call))
        call._fuzzcomp_bench_compiled = True
        return call

    real_run_call = getattr(execute, "run_call", None)

    def timed_run_call(fn, inputs, *args, **kwargs):
        if getattr(fn, "_fuzzcomp_bench_compiled", False):
            return real_run_call(fn, inputs, *args, **kwargs)
        tally = tally_ref[0]
        upcast = any(isinstance(x, torch.Tensor) and x.dtype == torch.float64 and declared != "float64"
                     for x, declared in zip(inputs, tally.float_inputs))
        slot = "fp64" if upcast else ("perturb" if tally.seen_compiled else "eager")

        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                setattr(tally, slot, getattr(tally, slot) + time.perf_counter() - t0)
        return real_run_call(timed, inputs, *args, **kwargs)

    torch.compile = timed_compile
    if real_run_call is not None:
        execute.run_call = timed_run_call
    try:
        yield real_run_call is not None
    finally:
        torch.compile = real_compile
        if real_run_call is not None:
            execute.run_call = real_run_call


def _cache_env(path: str):
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = path


def _cases(opts: BenchOptions):
    for seed in range(opts.first_seed, opts.first_seed + opts.seeds):
        t0 = time.perf_counter()
        case = _with_opts(generate(seed), opts)
        yield case, time.perf_counter() - t0


def _with_opts(case, opts: BenchOptions):
    case = case.with_compile(backend=opts.backend, device="cpu")
    if opts.dynamic != "as-generated":
        case = case.with_compile(dynamic={"none": None, "true": True, "false": False}[opts.dynamic])
    return case


def _warm_case(opts: BenchOptions):
    """One case outside the measured set: pays the one-time imports of Dynamo and the backend."""
    return _with_opts(generate(opts.first_seed + opts.seeds), opts)


def _rate(n: int, seconds: float) -> float:
    return round(n / seconds * 3600, 1) if seconds > 0 else 0.0


def _cpu_self_and_children() -> float:
    """CPU seconds of this process plus the children it waited for (Inductor's C++ compiler runs)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class _InProcess:
    """The worker's loop run in this process, with per-phase timers (see module doc)."""

    def __init__(self, opts: BenchOptions, cache: str):
        import torch
        self.execute, self.check, self.opts, self.cache = execute, check, opts, cache
        torch.set_num_threads(1)
        if hasattr(execute, "configure_torch"):
            execute.configure_torch()
        self.tally_ref = [_Tally()]
        self.per_case: list[dict] = []
        self.cpu = 0.0
        self.warm_s = 0.0
        self.profiler = None
        if opts.profile:
            import cProfile
            self.profiler = cProfile.Profile()

    def warm(self) -> None:
        _cache_env(self.cache)
        t0 = time.perf_counter()
        self.check(_warm_case(self.opts))
        self.warm_s = time.perf_counter() - t0

    def one(self, case, t_gen: float) -> None:
        _cache_env(self.cache)
        tally = self.tally_ref[0] = _Tally(float_inputs=[i.type.dtype for i in case.program.inputs])
        cpu0, t0 = _cpu_self_and_children(), time.perf_counter()
        if self.profiler:
            self.profiler.enable()
        obs, verdicts = self.check(case)
        if self.profiler:
            self.profiler.disable()
        t_check = time.perf_counter() - t0
        self.cpu += _cpu_self_and_children() - cpu0
        inside = tally.eager + tally.fp64 + tally.perturb + tally.compiled
        self.per_case.append({
            "seed": case.seed, "valid": bool(obs.eager_valid), "symptoms": sorted({v.symptom for v in verdicts}),
            "wall": t_gen + t_check, "generate": t_gen, "eager": tally.eager, "fp64": tally.fp64,
            "perturb": tally.perturb, "compiled": tally.compiled, "compile": tally.compile,
            "compiled_calls": tally.compiled_calls, "compiling_calls": tally.compiling_calls,
            "harness": t_gen + t_check - inside})

    def summary(self, split_eager: bool) -> dict:
        if self.profiler:
            self.profiler.dump_stats(self.opts.profile)
        per_case = self.per_case
        tot = {k: sum(c[k] for c in per_case) for k in ("wall",) + PHASES + ("compile",)}
        wall = tot["wall"]
        n, valid = len(per_case), sum(c["valid"] for c in per_case)
        compiled_cases = sum(1 for c in per_case if c["compiled_calls"])
        compiles = sum(c["compiling_calls"] for c in per_case)
        return {
            "cases": n, "valid": valid, "valid_rate": round(valid / n, 3) if n else 0.0,
            "warmup_s": round(self.warm_s, 2),
            "cases_with_verdicts": sum(1 for c in per_case if c["symptoms"]),
            "wall_s": round(wall, 2), "cpu_s": round(self.cpu, 2),
            "cases_per_hour_per_core": _rate(n, wall),
            "cases_per_cpu_hour": _rate(n, self.cpu),
            "compile_s_per_case": round(tot["compile"] / compiled_cases, 3) if compiled_cases else 0.0,
            "compiles_per_case": round(compiles / compiled_cases, 3) if compiled_cases else 0.0,
            "compile_s_per_compile": round(tot["compile"] / compiles, 3) if compiles else 0.0,
            "compiled_cases": compiled_cases,
            "phase_s": {k: round(tot[k], 3) for k in PHASES + ("compile",)},
            "phase_share": {k: round(tot[k] / wall, 4) if wall else 0.0 for k in PHASES},
            "harness_overhead": round(tot["harness"] / wall, 4) if wall else 0.0,
            "eager_split_measured": split_eager,
            "profiled": self.profiler is not None,   # cProfile slows the in-process pass (~25% seen)
            "compile_limit_cases_per_hour": _rate(compiled_cases, tot["compile"]),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "per_case": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in c.items()}
                         for c in per_case],
        }


def _proc_status_kb(pid: int, key: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _proc_cpu_s(pid: int) -> float | None:
    """utime+stime+cutime+cstime of a live process: its own CPU and its waited-for children's."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class _Isolated:
    """The same seeds through one spawned ``Worker``, as the campaign runs them."""

    def __init__(self, opts: BenchOptions, cache: str):
        self.CHECK, self.DONE, self.Job = CHECK, DONE, Job
        self.opts, self.cache = opts, cache
        self.worker = Worker(0, WorkerSettings())
        self.statuses: dict = {}
        self.phase: dict = {}
        self.n = self.valid = self.peak_kb = 0
        self.cpu_by_pid: dict = {}
        self.wall = self.start_s = self.warm_s = 0.0
        self.ready = False
        self.n_jobs = 0
        self.cpu_base: dict = {}

    def _note_proc(self) -> None:
        proc = self.worker.proc
        if proc is not None:  # a restarted worker (timeout, death, recycling) is a new pid
            self.peak_kb = max(self.peak_kb, _proc_status_kb(proc.pid, "VmHWM") or 0)
            self.cpu_by_pid[proc.pid] = _proc_cpu_s(proc.pid) or self.cpu_by_pid.get(proc.pid, 0.0)

    def _run(self, case):
        _cache_env(self.cache)   # a (re)spawned worker inherits this cache folder
        self.n_jobs += 1
        return self.worker.run(self.Job(self.n_jobs, self.CHECK, case, self.opts.case_timeout_s))

    def warm(self) -> None:
        _cache_env(self.cache)
        t0 = time.perf_counter()
        self.worker.start()
        self.ready = self.worker._await_ready() if hasattr(self.worker, "_await_ready") else True
        self.start_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        self._run(_warm_case(self.opts))
        self.warm_s = time.perf_counter() - t0
        self._note_proc()
        self.cpu_base = dict(self.cpu_by_pid)

    def one(self, case) -> None:
        t0 = time.perf_counter()
        result = self._run(case)
        self.wall += time.perf_counter() - t0
        self.n += 1
        self.valid += bool(result.status == self.DONE and result.valid)
        self.statuses[result.status] = self.statuses.get(result.status, 0) + 1
        for key, v in (result.timings or {}).items():
            self.phase[key] = self.phase.get(key, 0.0) + float(v)
        self._note_proc()

    def stop(self) -> None:
        self.worker.stop()

    def summary(self) -> dict:
        cpu = sum(v - self.cpu_base.get(pid, 0.0) for pid, v in self.cpu_by_pid.items())
        return {
            "cases": self.n, "valid": self.valid, "statuses": self.statuses, "ready": bool(self.ready),
            "worker_start_s": round(self.start_s, 2), "warmup_s": round(self.warm_s, 2),
            "wall_s": round(self.wall, 2), "worker_cpu_s": round(cpu, 2),
            "cases_per_hour_per_core": _rate(self.n, self.wall),
            "cases_per_cpu_hour": _rate(self.n, cpu),
            "worker_timings_s": {k: round(v, 3) for k, v in sorted(self.phase.items())},
            "peak_rss_mb_per_worker": round(self.peak_kb / 1024, 1),
            "peak_rss_source": "/proc/<pid>/status VmHWM",
        }


def measure(opts: BenchOptions, say=lambda msg: None) -> tuple[dict, dict | None]:
    """Both modes over the same seeds, interleaved seed by seed so both see the same machine load.

    Each mode has its own fresh Inductor cache folder, so neither reuses the
    other's compiled kernels; both warm up on one extra seed first.
    """
    with environ_var("TORCHINDUCTOR_CACHE_DIR"), tempfile.TemporaryDirectory(prefix="fuzzcomp-bench-") as d:
        ip = _InProcess(opts, os.path.join(d, "inproc"))
        iso = _Isolated(opts, os.path.join(d, "isolated")) if opts.isolated else None
        try:
            if iso:
                iso.warm()
            with _probe(ip.tally_ref) as split_eager:
                ip.warm()
                for k, (case, t_gen) in enumerate(_cases(opts)):
                    ip.one(case, t_gen)   # in this process, under the probe
                    if iso:
                        iso.one(case)     # the worker runs the unprobed code
                    say(f"  seed {case.seed} done ({k + 1}/{opts.seeds})")
        finally:
            if iso:
                iso.stop()
        return ip.summary(split_eager), (iso.summary() if iso else None)


def _versions() -> dict:
    import torch
    return {"torch": torch.__version__, "python": platform.python_version(), "fuzzcomp": __version__,
            "generator": GENERATOR_VERSION, "cpus": os.cpu_count(),
            "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}


def run_bench(opts: BenchOptions, say=lambda msg: None) -> dict:
    out = {"config": asdict(opts), "versions": _versions(), "inprocess": None, "isolated": None,
           "campaign": None, "recall": None, "ratios": {}}
    say(f"{opts.seeds} seeds on {opts.backend}: in this process" + (" and in a worker, interleaved"
                                                                     if opts.isolated else ""))
    out["inprocess"], out["isolated"] = measure(opts, say)
    ip, iso = out["inprocess"], out["isolated"]
    if iso and ip["wall_s"] > 0:
        out["ratios"]["isolated_over_inprocess_wall"] = round(iso["wall_s"] / ip["wall_s"], 3)
    if iso and ip["cpu_s"] > 0:
        out["ratios"]["isolated_over_inprocess_cpu"] = round(iso["worker_cpu_s"] / ip["cpu_s"], 3)
    workdir = opts.workdir or tempfile.mkdtemp(prefix="fuzzcomp-bench-")
    if opts.campaign_minutes > 0:
        say(f"campaign: {opts.campaign_minutes} min of {opts.campaign_backend} via `fuzzcomp run`")
        out["campaign"] = bench_campaigns.campaign(opts, workdir)
    if opts.recall:
        say(f"recall: {len(opts.recall)} planted backends, up to {opts.recall_cases} cases each")
        out["recall"] = bench_campaigns.recall(opts, workdir, say)
    ip = out["inprocess"]
    if ip["compile_limit_cases_per_hour"]:
        out["ratios"]["compile_limit_over_throughput"] = round(
            ip["compile_limit_cases_per_hour"] / max(ip["cases_per_hour_per_core"], 1e-9), 3)
    return out


def render(result: dict, console=None) -> None:
    """Print the result as rich tables."""
    from rich.console import Console
    from rich.table import Table
    console = console or Console()
    ip, iso = result["inprocess"], result["isolated"]
    t = Table(title=f"fuzzcomp bench: {ip['cases']} seeds, backend {result['config']['backend']}, "
                    f"torch {result['versions']['torch']}")
    t.add_column("metric")
    t.add_column("value", justify="right")
    rows = [("cases/hour/core (in-process)", ip["cases_per_hour_per_core"]),
            ("cases/CPU-hour (in-process)", ip["cases_per_cpu_hour"]),
            ("valid rate", f"{ip['valid_rate']:.1%}"),
            ("compile s/case", ip["compile_s_per_case"]),
            ("compiles/case", ip["compiles_per_case"]),
            ("compile s/compile", ip["compile_s_per_compile"]),
            ("compile-time limit, cases/hour", ip["compile_limit_cases_per_hour"]),
            ("harness overhead", f"{ip['harness_overhead']:.1%}"),
            ("peak RSS, this process (MB)", ip["peak_rss_mb"])]
    if iso:
        rows += [("cases/hour/core (isolated worker)", iso["cases_per_hour_per_core"]),
                 ("cases/CPU-hour (isolated worker)", iso["cases_per_cpu_hour"]),
                 ("worker start (s)", iso["worker_start_s"]),
                 ("peak RSS per worker (MB)", iso["peak_rss_mb_per_worker"])]
    for k, v in result["ratios"].items():
        rows.append((f"ratio {k}", v))
    for k, v in rows:
        t.add_row(k, str(v))
    console.print(t)
    p = Table(title="time by phase (in-process, s)")
    for c in ("phase", "seconds", "share"):
        p.add_column(c, justify="right" if c != "phase" else "left")
    for k in PHASES:
        p.add_row(k, f"{ip['phase_s'][k]:.2f}", f"{ip['phase_share'][k]:.1%}")
    p.add_row("(compile, part of compiled)", f"{ip['phase_s']['compile']:.2f}", "")
    console.print(p)
    camp = result.get("campaign")
    if camp:
        c = Table(title=f"campaign `fuzzcomp run` on {camp['backend']}")
        c.add_column("metric")
        c.add_column("value", justify="right")
        for k in ("cases", "valid_rate", "wall_s", "cases_per_hour_per_core", "buckets", "findings",
                  "buckets_per_hour", "exit_code"):
            c.add_row(k, str(camp.get(k)))
        console.print(c)
    rec = result.get("recall")
    if rec:
        r = Table(title="recall on planted faults (real campaign path)")
        for col in ("backend", "detected", "first finding after (s)", "cases to detect", "symptom",
                    "cases run", "buckets"):
            r.add_column(col)
        for name, x in rec.items():
            r.add_row(name, str(x["detected"]), str(x["first_finding_s"]), str(x["cases_to_detect"]),
                      str(x["first_symptom"]), str(x["cases"]), str(x["buckets"]))
        console.print(r)


def write_result(result: dict, path: str) -> None:
    """Write the JSON atomically (a reader never sees half a file)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    os.replace(tmp, path)
