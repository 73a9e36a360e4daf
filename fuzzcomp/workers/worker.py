"""Long-lived worker processes that run Jobs in isolation from the campaign.

Contract: a ``Worker`` owns one spawned process with torch imported once. The
parent ``submit``s one Job at a time and later ``collect``s its JobResult. A
worker that dies (segfault, abort, OOM kill) or outlives its job's timeout is
killed and restarted, and the job's result says ``died`` or ``timeout`` (a sticky CUDA error,
seen in the answer or by the worker's synchronize probe after each job, restarts it too and a
check job's answer becomes ``died``: ``isolation_verdicts.as_death``): a
crash inside torch never reaches the campaign. Three clocks decide
``timeout``: the job's whole ``timeout_s``, and, from the worker's phase
markers, ``compile_timeout_s`` for any one compilation and ``run_timeout_s``
for any one eager or compiled run (the result's message names the phase). Workers are recycled every
``recycle_every`` jobs to bound memory growth. ``run`` is the synchronous form;
``cancel`` (from another thread) makes a pending ``run`` return ``cancelled``
at once and kills the process.

Memory: ``memory_mb`` caps the worker's address space (RLIMIT_AS; inherited by
the C++ compiler Inductor spawns). A torch+Inductor CPU worker peaks near
0.8 GB of address space (measured on torch 2.13, one thread), so the default
cap of 4096 MB leaves 5x headroom; CUDA reserves huge virtual ranges, so the
cap is off there. An allocation refused by the cap raises inside torch; the
campaign logs such cases as ``oom`` events, never as findings.

Caches: workers run with Inductor's FX-graph cache and AOTAutograd's cache
switched off (by config, so a case can turn them on: the env variables that would force them,
``CACHE_ENV``, are removed from the worker's environment), and with ``TORCHINDUCTOR_CACHE_DIR`` pointing to a folder of
their own: ``settings.cache_dir`` (the campaign passes one fresh folder per
campaign, shared by its workers: see ``campaign.worker_env.inductor_cache_dir``) or,
without it, a fresh folder per worker process, deleted when the process ends. A fuzzer wants every case
compiled for real: an FX-graph cache hit skips lowering and codegen, so a
re-run (minimisation probe, resume, replay) could be served from disk and hide
a codegen crash; and the user's shared cache would grow without bound over a
long campaign. What stays cached is the C++ compiler's output keyed by the
kernel source (a failed compile is never cached, so it fails again), which
spares each restarted worker Inductor's CPU-capability probe compile (the
first case in an empty cache took 121-145 s on a loaded 2-core box, the next
ones 11-14 s). A warm-cache case (``compile.cache == "warm"``) is the exception, run as users
run: caches on, then judged again in a second process served from them (``warm_cache``).
"""
from __future__ import annotations

import dataclasses
import multiprocessing as mp
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import wait

from fuzzcomp.workers.interface import WorkerBase
from fuzzcomp.workers.isolation_verdicts import as_death, sticky_cuda
from fuzzcomp.base.messages import CHECK, DIED, DONE, EAGER_ONLY, HARNESS_ERROR, LOCALISE, TIMEOUT, Job, JobResult

DEFAULT_MEMORY_MB = 4096

#: Env variables that force the FX-graph and AOTAutograd caches whatever the config says:
#: removed from every worker's environment before torch is imported (``configure_torch`` turns
#: both caches off by config, which a warm-cache case can override; a forced value could not be).
CACHE_ENV = ("TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_AUTOGRAD_CACHE")


class WorkerStartError(RuntimeError):
    """A worker process keeps dying before it is ready (broken install, cap too small)."""


@dataclass(frozen=True)
class WorkerSettings:
    threads: int = 1
    memory_mb: int = 0          # address-space cap per worker; 0 = none
    log_path: str | None = None  # the worker's stdout/stderr go here
    recycle_every: int = 200
    private_cache: bool = True   # own TORCHINDUCTOR_CACHE_DIR, FX-graph/AOT caches off
    cache_dir: str | None = None  # shared by the campaign's workers; None = one per process
    gpus: int = 0                 # >0: worker i sees only GPU i % gpus (CUDA_VISIBLE_DEVICES)
    gpu: int | None = None        # set per worker from ``gpus`` when it starts
    strict_precision: bool = False  # --half-rounding strict: ExecOptions.strict_precision


def _setup_cache(cache_dir: str | None) -> None:
    if cache_dir:
        for name in CACHE_ENV:
            os.environ.pop(name, None)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
        os.environ["TRITON_CACHE_DIR"] = os.path.join(cache_dir, "triton")


def _limit_memory(mb: int) -> None:
    if mb > 0:
        import resource
        cap = mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def worker_main(conn, settings: WorkerSettings, cache_dir: str | None = None) -> None:
    _setup_cache(cache_dir)
    if settings.gpu is not None:  # before anything initialises CUDA in this process
        visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
        os.environ["CUDA_VISIBLE_DEVICES"] = visible[settings.gpu] if settings.gpu < len(visible) \
            else str(settings.gpu)
    if settings.log_path:
        fd = os.open(settings.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the campaign's to handle, not ours
    try:  # own session: a terminal's Ctrl-C must not reach the C++ compiler we spawn (a false crash)
        os.setsid()
    except OSError:
        pass
    import warnings
    warnings.filterwarnings("ignore")
    _limit_memory(settings.memory_mb)
    # lazily, on purpose: the child imports torch and the executor only after it has set
    # CUDA_VISIBLE_DEVICES, its session and its memory cap (torch reads them when it loads);
    # the parent, which only sends jobs, never imports the executor
    import torch
    torch.set_num_threads(settings.threads)
    from fuzzcomp.run import compiler_signals as signals
    from fuzzcomp.run.execute import ExecOptions, configure_torch, observe, set_phase_listener
    from fuzzcomp.judge.check import check
    from fuzzcomp.workers import warm_cache
    configure_torch()
    set_phase_listener(lambda name: conn.send(("phase", name)))
    warm = warm_cache.WarmCache(settings.threads, forward=conn.send)
    conn.send("ready")
    while True:
        try:
            job = conn.recv()
        except (EOFError, KeyboardInterrupt):
            warm.close()
            return
        if job is None:
            warm.close()
            return
        try:
            if job.kind == CHECK:
                options = ExecOptions(strict_precision=settings.strict_precision)
                with _fix_context(job):
                    if warm_cache.applies(job.case):
                        obs, verdicts = warm.checked(lambda c, o: signals.checked(check, c, o), job.case, options)
                    else:
                        obs, verdicts = signals.checked(check, job.case, options)
                result = JobResult(job.id, DONE, obs.eager_valid, verdicts, obs.stats, obs.timings)
            elif job.kind == EAGER_ONLY:
                obs = observe(job.case, eager_only=True)
                result = JobResult(job.id, DONE, obs.eager_valid, [], {}, obs.timings)
            elif job.kind == LOCALISE and job.target is not None:
                from fuzzcomp.judge.check import localise
                result = JobResult(job.id, DONE, True, [], localise(job.case, job.target), {})
            else:
                result = JobResult(job.id, HARNESS_ERROR, message=f"unknown job kind {job.kind!r}")
        except Exception as e:  # our own bug, not the compiler's: reported, never a finding
            result = JobResult(job.id, HARNESS_ERROR, message=f"{type(e).__name__}: {e}")
        except BaseException as e:  # MemoryError under the cap, RecursionError...: still an answer
            result = JobResult(job.id, HARNESS_ERROR, message=f"{type(e).__name__}: {e}")
        poisoned = _cuda_poisoned(torch)
        if poisoned:  # every later CUDA call of this process fails: the parent restarts us
            result.stats = dict(result.stats or {}, cuda_poisoned=poisoned)
        conn.send(result)


def _fix_context(job):
    """The job's fix probe (``fuzzcomp.run.fix_probes``) around its check, or nothing."""
    import contextlib
    fix = getattr(job, "fix", None)
    if not fix:
        return contextlib.nullcontext()
    from fuzzcomp.run.fix_probes import apply
    return apply(fix)


def _cuda_poisoned(torch) -> str:
    """The sticky CUDA error this process's context holds ("" if healthy or never used)."""
    try:
        if not torch.cuda.is_initialized():
            return ""
        torch.cuda.synchronize()
        return ""
    except Exception as e:  # a device-side assert, an illegal access: sticky until the process ends
        return f"{type(e).__name__}: {e}"[:300]


class Worker(WorkerBase):
    """One spawned process on this machine (see the module doc)."""

    def __init__(self, index: int, settings: WorkerSettings):
        super().__init__()
        self.index = index
        self.settings = settings
        self._ctx = mp.get_context("spawn")
        self.proc = None
        self.conn = None
        self.job: Job | None = None
        self.started_at = 0.0
        self.jobs_done = 0
        self.restarts = 0
        self.failed_starts = 0
        self.cache_dir: str | None = None
        self.startup_s = 0.0            # seconds spent starting processes (spawn + import torch)
        self._spawned_at = None
        self.phase: str | None = None   # the running job's current phase, from the worker's markers
        self.phase_since = 0.0

    # ---- lifecycle --------------------------------------------------------------
    def start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._drop_cache()
        cache = None
        if self.settings.private_cache:
            cache = self.settings.cache_dir
            if cache is None:
                cache = self.cache_dir = tempfile.mkdtemp(prefix=f"fuzzcomp-w{self.index}-")
        settings = self.settings
        if settings.gpus > 0:
            settings = dataclasses.replace(settings, gpu=self.index % settings.gpus)
        self.proc = self._ctx.Process(target=worker_main, args=(child, settings, cache),
                                      name=f"fuzzcomp-worker-{self.index}", daemon=True)
        self._spawned_at = time.monotonic()
        self.proc.start()
        child.close()
        self.conn = parent
        self._ready = False
        self.jobs_done = 0

    def poll_ready(self) -> bool:
        """Without blocking: has the process finished importing torch? Restarts a dead one."""
        if self.proc is None:
            self.start()
        if self._ready:
            return True
        try:
            if self.conn.poll():
                self._ready = self.conn.recv() == "ready"
                self.failed_starts = 0
                self._started()
                return self._ready
        except (EOFError, OSError):
            pass
        if not self.proc.is_alive():
            self.failed_starts += 1
            if self.failed_starts >= 5:
                raise WorkerStartError(f"worker {self.index} died 5 times while starting "
                                   f"(exit code {self.proc.exitcode}); see {self.settings.log_path}")
            self.restart()
        return False

    def _await_ready(self, timeout: float = 300.0) -> bool:
        if self._ready:
            return True
        if self.conn.poll(timeout):
            try:
                self._ready = self.conn.recv() == "ready"
                self._started()
            except (EOFError, OSError):
                self._ready = False
        return self._ready

    def _started(self) -> None:
        if self._spawned_at is not None:
            self.startup_s += time.monotonic() - self._spawned_at
            self._spawned_at = None

    def kill(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
        if self.proc is not None:
            self.proc.join(5)
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None
        self._drop_cache()

    def _drop_cache(self) -> None:
        if self.cache_dir:
            shutil.rmtree(self.cache_dir, ignore_errors=True)
            self.cache_dir = None

    def restart(self) -> None:
        self.restarts += 1
        self.kill()
        self.start()

    def stop(self, grace_s: float = 2.0) -> None:
        """Ask politely, then kill."""
        if self.conn is not None and self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
                self.proc.join(grace_s)
            except (OSError, BrokenPipeError):
                pass
        self.kill()

    # ---- one job at a time ----------------------------------------------------------
    def submit(self, job: Job) -> None:
        if self.proc is None or not self.proc.is_alive():
            self.start()
        if not self._await_ready():
            self.restart()
            self._await_ready()
        self.job = job
        self.started_at = self.phase_since = time.monotonic()
        self.phase = None
        self.conn.send(job)

    def waitables(self) -> list:
        return [self.conn, self.proc.sentinel] if self.proc is not None else []

    def overdue(self) -> bool:
        return self._overdue() is not None

    def _overdue(self) -> tuple[str, dict] | None:
        """(why, {"phase": ..., "limit": seconds}) once the running job is out of time."""
        job = self.job
        if job is None:
            return None
        now = time.monotonic()
        if now - self.started_at > job.timeout_s:
            return f"no answer within {job.timeout_s:g} s", {"phase": self.phase, "limit": None}
        limit = job.compile_timeout_s if self.phase == "compile" else \
            job.run_timeout_s if self.phase in ("eager", "run") else None
        if limit is not None and now - self.phase_since > limit:
            what = "a compilation" if self.phase == "compile" else \
                "an eager run" if self.phase == "eager" else "a compiled run"
            return f"{what} took longer than {limit:g} s", {"phase": self.phase, "limit": limit}
        return None

    def _receive(self):
        """The next message that is not a phase marker (None if none is waiting)."""
        while self.conn.poll():
            msg = self.conn.recv()
            if isinstance(msg, tuple) and len(msg) == 2 and msg[0] == "phase":
                self.phase, self.phase_since = msg[1], time.monotonic()
                continue
            return msg
        return None

    def collect(self, force_timeout: bool = False) -> JobResult | None:
        """The finished job's result, or None while it is still running."""
        job = self.job
        if job is None:
            return None
        try:
            result = self._receive()
        except (EOFError, OSError):
            result = None
        late = self._overdue() if result is None else None
        if result is None and (force_timeout or late):
            why, where = late or (f"no answer within {job.timeout_s:g} s", {"phase": self.phase, "limit": None})
            self.restart()
            self.job = None
            return JobResult(job.id, TIMEOUT, stats=where, message=why)
        try:
            if result is not None:
                self.job = None
                self.jobs_done += 1
                if sticky_cuda(result):  # the CUDA context is gone: a fresh process for the next job
                    self.restart()
                    return as_death(result, job.kind)
                if self.jobs_done >= self.settings.recycle_every:
                    self.restart()
                return result
        except (EOFError, OSError):
            pass
        if not self.proc.is_alive():
            code = self.proc.exitcode
            self.restart()
            self.job = None
            return JobResult(job.id, DIED, message=f"worker died with exit code {code}", exitcode=code)
        return None

    def _wait_a_little(self, job: Job) -> None:
        remaining = job.timeout_s - (time.monotonic() - self.started_at)
        wait(self.waitables(), timeout=max(0.05, min(remaining, 1.0)))


def stop_all(workers, grace_s: float = 2.0, hurry: threading.Event | None = None) -> None:
    """Stop every worker at once: each is asked to exit and killed after ``grace_s``, all in
    parallel, so stopping N workers takes about ``grace_s``, not N times it. ``hurry`` (set by a
    second signal) skips what is left of the wait."""
    threads = [threading.Thread(target=w.stop, kwargs={"grace_s": grace_s} if isinstance(w, Worker) else {},
                                name=f"fuzzcomp-stop-{getattr(w, 'index', i)}", daemon=True)
               for i, w in enumerate(workers)]
    for t in threads:
        t.start()
    until = time.monotonic() + grace_s + 6.0
    for t in threads:
        while t.is_alive() and time.monotonic() < until and not (hurry is not None and hurry.is_set()):
            t.join(0.1)
