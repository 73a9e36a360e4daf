"""Ray actors as campaign workers: one campaign across the machines of a Ray cluster.

Contract: ``RayEngine(address, device, log)`` connects this process (the
driver) to a Ray cluster and ``workers(count, settings)`` places one actor per
core on every live node (one per GPU with ``device="cuda"``); ``count`` caps the
total, 0 means every slot. Each actor hosts one ordinary ``fuzzcomp.workers.worker``
``Worker`` on its node, so crash and hang isolation inside a node is the local
code, unchanged: a case that kills or hangs its worker process comes back as a
``died`` or ``timeout`` result, exactly as on one machine. ``RayWorker``
implements the ``Worker`` interface around its actor, so the campaign loop,
the minimiser (``run``) and the store are shared with the local engine.

Faults of the cluster itself are not findings. When an actor or its node is
lost mid-job (killed, OOM-killed, machine gone), ``RayWorker`` starts a
replacement actor (on the same node while that node lives, else on a node
with a free slot, else oversubscribing the least loaded live node) and
re-runs the job there, up to ``MAX_ATTEMPTS`` times; after that the job comes
back as a ``harness-error`` result, which the campaign records as a case. So
a lost actor loses no case and no finding: the case is retried or recorded.
Every loss, retry and move is written to the event log (``ray-lost``,
``ray-retry``, ``ray-moved``). If no live node is left, ``RayEngineError``
ends the campaign: the findings and completed cases are on disk and
``--resume`` continues it.
"""
from __future__ import annotations

import os
import socket
import sys
import tempfile
import time
from collections import Counter
from dataclasses import fields, replace

from fuzzcomp.base import messages
from fuzzcomp.base.config import ConfigError
from fuzzcomp.base.messages import HARNESS_ERROR, TIMEOUT, Job, JobResult
from fuzzcomp.workers.interface import WorkerBase
from fuzzcomp.workers.worker import Worker, WorkerSettings

MAX_ATTEMPTS = 4          # runs of one job on successive actors before it is recorded as lost
STARTUP_GRACE_S = 360.0   # an actor may take this long beyond the job timeout (it starts its worker first)
MAX_FAILED_STARTS = 5     # actors of one worker dying before they are ready: a broken node, not bad luck
CANCELLED = getattr(messages, "CANCELLED", "cancelled")


class RayEngineError(ConfigError):
    pass


def _import_ray():
    try:
        import ray
    except ImportError:
        raise RayEngineError("--ray needs Ray, which is not installed here: "
                             "pip install 'fuzzcomp[ray]'") from None
    return ray


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast on a HOST:PORT nobody listens on (Ray itself retries for minutes)."""
    if address in ("default", "auto") or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise RayEngineError(f"--ray {address}: give the cluster's address as HOST:PORT (e.g. 10.0.0.5:6379)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as e:
        raise RayEngineError(f"--ray {address}: no Ray cluster answers there ({e.strerror or e}); "
                             "start one with `ray start --head` or check the address") from None


def _first_line(err) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0][:300] if text else ''}"


def node_log_path(log_path: str) -> str:
    """Where a node that cannot see the campaign folder writes its workers' output.

    One file per campaign in the node's temp dir, named after the campaign
    folder, rather than one fixed /tmp/fuzzcomp-workers.log: a fixed name mixes
    campaigns, and one left by another user (whose /tmp file this user may not
    open) would stop every worker on that node from starting.
    """
    campaign = os.path.basename(os.path.dirname(os.path.abspath(log_path))) or "campaign"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in campaign)[:80]
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join(tempfile.gettempdir(), f"fuzzcomp-{safe}-{uid}-workers.log")


class NodeWorker:
    """The Ray actor: one local ``Worker`` (a spawned process) on the actor's node."""

    def __init__(self, index: int, settings: WorkerSettings):
        local = {}  # paths of the driver's machine that this node may not have
        log = settings.log_path
        if log and not os.path.isdir(os.path.dirname(log) or "."):  # campaign folder not on this node
            local["log_path"] = node_log_path(log)
        if "cache_dir" in {f.name for f in fields(settings)} and getattr(settings, "cache_dir") \
                and not os.path.isdir(settings.cache_dir):
            local["cache_dir"] = None  # the driver's shared compile cache: one private cache per worker here
        self.worker = Worker(index, replace(settings, **local))
        self.worker.start()

    def where(self) -> dict:
        proc = self.worker.proc
        return {"pid": os.getpid(), "host": socket.gethostname(),
                "worker_pid": proc.pid if proc is not None else None}

    def run(self, job: Job):
        return self.worker.run(job)

    def stop(self) -> None:
        self.worker.stop()


class RayWorker(WorkerBase):
    """The worker interface (``interface.WorkerBase``) over one Ray actor; see the module
    docstring for faults."""

    def __init__(self, engine: "RayEngine", index: int, settings: WorkerSettings, node: str):
        super().__init__()
        self.engine, self.index, self.settings, self.node = engine, index, settings, node
        self.oversubscribed = False
        self.actor = None
        self.ref = None            # the object ref of the job in flight
        self.where_ref = None
        self.job: Job | None = None
        self.started_at = 0.0
        self.attempt = 0
        self.failed_starts = 0

    # ---- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        if self.actor is None:
            self.actor = self.engine.new_actor(self.index, self.settings, self.node, self.oversubscribed)
            self.where_ref = self.actor.where.remote()

    def kill(self) -> None:
        if self.actor is not None:
            try:
                self.engine.ray.kill(self.actor, no_restart=True)
            except Exception:  # already dead, or its node is gone
                pass
        self.actor = self.ref = None

    def restart(self) -> None:
        self.kill()
        self.start()

    def poll_ready(self) -> bool:
        """Without blocking: has the actor started its worker? Replaces an actor that died starting."""
        self.start()
        ray = self.engine.ray
        if not ray.wait([self.where_ref], timeout=0)[0]:
            return False
        try:
            ray.get(self.where_ref)
            return True
        except ray.exceptions.RayError as e:
            self._start_failed(_first_line(e))
            self.kill()
            self.node, self.oversubscribed = self.engine.relocate(self)
            self.start()
            return False

    def _start_failed(self, why: str) -> None:
        self.failed_starts += 1
        self.engine.log("ray-start-failed", worker=self.index, node=self.node[:12], error=why)
        if self.failed_starts >= MAX_FAILED_STARTS:
            raise RayEngineError(f"Ray worker {self.index} died {self.failed_starts} times while starting "
                                 f"on node {self.node[:12]} ({why}); is fuzzcomp installed on every node?")

    def stop(self) -> None:
        if self.actor is not None and self.ref is None:
            try:
                self.engine.ray.get(self.actor.stop.remote(), timeout=15)
            except Exception:
                pass
        self.kill()

    # ---- one job at a time -------------------------------------------------------------
    def submit(self, job: Job) -> None:
        self.start()
        self.job, self.attempt = job, 1
        self.started_at = time.monotonic()
        self.ref = self.actor.run.remote(job)

    def waitables(self) -> list:
        return []  # Ray refs are waited on by RayEngine.wait_any

    def overdue(self) -> bool:
        return self.job is not None and \
            time.monotonic() - self.started_at > self.job.timeout_s + STARTUP_GRACE_S

    def collect(self, force_timeout: bool = False) -> JobResult | None:
        job = self.job
        if job is None:
            return None
        ray = self.engine.ray
        if force_timeout:  # the campaign's call, as for a local worker: the case counts as hung
            self.restart()
            self.job = None
            return JobResult(job.id, TIMEOUT, message=f"no answer within {job.timeout_s:g} s")
        if self.overdue():  # the actor itself is stuck (its worker enforces the job's own timeout)
            return self._lost(job, f"the actor gave no answer within {job.timeout_s + STARTUP_GRACE_S:g} s")
        ready, _ = ray.wait([self.ref], timeout=0)
        if not ready:
            return None
        try:
            result = ray.get(self.ref)
        except ray.exceptions.RayTaskError as e:  # our own code raised inside the actor
            self.job = self.ref = None
            return JobResult(job.id, HARNESS_ERROR, message=f"Ray actor raised {_first_line(e)}")
        except ray.exceptions.RayError as e:      # the actor or its node is gone
            return self._lost(job, _first_line(e))
        self.job = self.ref = None
        self.failed_starts = 0
        return result

    def _lost(self, job: Job, why: str) -> JobResult | None:
        engine = self.engine
        engine.losses += 1
        engine.log("ray-lost", worker=self.index, node=self.node[:12], job=job.id, job_kind=job.kind,
                   seed=job.case.seed, attempt=self.attempt, error=why)
        ray = engine.ray
        if self.where_ref is not None and ray.wait([self.where_ref], timeout=0)[0]:
            try:
                ray.get(self.where_ref)
            except ray.exceptions.RayError as e:  # this actor never got its worker going
                self._start_failed(_first_line(e))
        self.kill()
        self.node, self.oversubscribed = engine.relocate(self)
        self.start()
        if self.attempt < MAX_ATTEMPTS:
            self.attempt += 1
            self.started_at = time.monotonic()
            self.ref = self.actor.run.remote(job)
            engine.retries += 1
            engine.log("ray-retry", worker=self.index, node=self.node[:12], job=job.id, job_kind=job.kind,
                       seed=job.case.seed, attempt=self.attempt, oversubscribed=self.oversubscribed)
            return None
        self.job = self.ref = None
        return JobResult(job.id, HARNESS_ERROR,
                         message=f"lost the Ray actor {self.attempt} times running this job; last: {why}")

    def _wait_a_little(self, job: Job) -> None:
        if self.ref is not None:
            self.engine.ray.wait([self.ref], timeout=1.0)


def _ray_temp_dir() -> str:
    """Ray's default temp dir, by Ray's own rule: $RAY_TMPDIR/ray, else $TMPDIR/ray (Linux), else /tmp/ray."""
    base = os.environ.get("RAY_TMPDIR") or \
        (os.environ.get("TMPDIR") if sys.platform.startswith("linux") else None) or \
        ("/tmp" if sys.platform.startswith(("linux", "darwin")) else tempfile.gettempdir())
    return os.path.join(base, "ray")


def _started_here() -> str | None:
    """The address of a cluster `ray start` launched on this machine, if it still answers.

    `ray start` records it in <Ray's temp dir>/ray_current_cluster and `ray stop`
    deletes the file; a file left by a crashed or killed cluster names an
    address nobody answers on, and is ignored (Ray itself would retry it for
    minutes and then fail).
    """
    try:
        with open(os.path.join(_ray_temp_dir(), "ray_current_cluster")) as f:
            address = f.read().strip()
    except OSError:
        return None
    try:
        _check_reachable(address, timeout_s=2.0)
    except RayEngineError:
        return None
    return address


def resolve_address(address: str) -> tuple[str, bool]:
    """(what to pass to ``ray.init``, whether that starts a new one-machine Ray).

    ``default`` (``--ray`` with no address) means: $RAY_ADDRESS, else a cluster
    started with `ray start` on this machine, else a one-machine Ray of our own.
    """
    if address != "default":
        return address, False
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if env:
        _check_reachable(env)
        return env, False
    here = _started_here()
    if here:
        return here, False
    return "local", True


class RayEngine:
    def __init__(self, address: str, device: str = "cpu", log=None):
        _check_reachable(address)
        ray = _import_ray()
        self.ray, self.address, self.device = ray, address, device
        self.log = log or (lambda *a, **k: None)
        self.losses = self.retries = 0
        self._workers: list[RayWorker] = []
        self._requested = 0
        self._owns = not ray.is_initialized()
        if self._owns:
            target, own = resolve_address(address)
            opts = dict(log_to_driver=False, logging_level="WARNING")
            if own:
                # Our own one-machine Ray. Its temp dir is created here rather than
                # left to Ray, so a first run on a new machine (no /tmp/ray, or a
                # fresh $TMPDIR) starts the same way as every later one; no dashboard,
                # which nobody asked for and which needs extra packages and a port.
                temp = _ray_temp_dir()
                try:
                    os.makedirs(temp, exist_ok=True)
                except OSError as e:
                    raise RayEngineError(f"--ray: cannot create Ray's temp dir {temp} ({e.strerror or e}); "
                                         "set RAY_TMPDIR to a writable folder") from None
                opts.update(include_dashboard=False, _temp_dir=temp)
            try:
                ray.init(address=target, **opts)
            except Exception as e:  # ConnectionError, bad address, version mismatch, no shared memory...
                what = "cannot start a one-machine Ray here" if own else "cannot connect to a Ray cluster"
                raise RayEngineError(f"--ray {address}: {what}: {_first_line(e)}") from None
            if own:
                self.address = "local"
        self._actor_cls = ray.remote(max_restarts=0)(NodeWorker)

    # ---- placement ---------------------------------------------------------------------
    def _slots(self, node: dict) -> int:
        res = node.get("Resources", {})
        cpus, gpus = int(res.get("CPU", 0)), int(res.get("GPU", 0))
        return min(gpus, cpus) if self.device == "cuda" else cpus

    def _live_slots(self) -> dict[str, int]:
        """Node id -> worker slots, for live nodes with at least one slot (stable order)."""
        nodes = sorted((n for n in self.ray.nodes() if n.get("Alive")), key=lambda n: n["NodeID"])
        return {n["NodeID"]: s for n in nodes if (s := self._slots(n)) > 0}

    def new_actor(self, index: int, settings: WorkerSettings, node: str, oversubscribed: bool):
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        opts = {"scheduling_strategy": NodeAffinitySchedulingStrategy(node, soft=False),
                "num_cpus": 0 if oversubscribed else 1}
        if self.device == "cuda" and not oversubscribed:
            opts["num_gpus"] = 1
        return self._actor_cls.options(**opts).remote(index, settings)

    def relocate(self, worker: RayWorker) -> tuple[str, bool]:
        """Where a lost worker's replacement goes: its node if alive, else a free slot, else oversubscribe."""
        alive = self._live_slots()
        if worker.node in alive:
            return worker.node, worker.oversubscribed
        if not alive:
            raise RayEngineError("no live Ray node with a free "
                                 f"{'GPU' if self.device == 'cuda' else 'CPU'} is left; the campaign "
                                 "stopped with its findings on disk (continue it with --resume)")
        load = Counter(w.node for w in self._workers if w is not worker)
        free = [n for n in alive if load[n] < alive[n]]
        node = min(free or alive, key=lambda n: (load[n] / alive[n], n))
        self.log("ray-moved", worker=worker.index, from_node=worker.node[:12], to_node=node[:12],
                 oversubscribed=not free)
        return node, not free

    # ---- the engine interface ------------------------------------------------------------
    def workers(self, count: int, settings: WorkerSettings) -> list[RayWorker]:
        slots = self._live_slots()
        total = sum(slots.values())
        if total == 0:
            self.close()
            raise RayEngineError(f"the Ray cluster has no node with a "
                                 f"{'GPU' if self.device == 'cuda' else 'CPU'} to run workers on")
        self._requested = count
        want = min(count, total) if count else total
        left, plan = dict(slots), []
        while len(plan) < want:  # round-robin, so a capped campaign still spreads over every node
            for node in slots:
                if left[node] > 0 and len(plan) < want:
                    left[node] -= 1
                    plan.append(node)
        self._workers = [RayWorker(self, i, settings, node) for i, node in enumerate(plan)]
        return list(self._workers)

    def wait_any(self, workers, timeout: float) -> None:
        """Until a busy worker's job ends, or an idle one's actor is up (the caller passes only those)."""
        refs = [r for w in workers if (r := w.ref if w.busy else w.where_ref) is not None]
        if refs:
            self.ray.wait(refs, num_returns=1, timeout=timeout)
        else:
            time.sleep(min(timeout, 0.05))

    def describe(self, timeout_s: float = 120.0) -> dict:
        """The layout for the event log; waits (bounded) for the actors to report where they run."""
        refs = [w.where_ref for w in self._workers if w.where_ref is not None]
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=timeout_s) if refs else ([], [])
        ready = set(ready)
        layout = []
        for w in self._workers:
            info = {"worker": w.index, "node": w.node[:12]}
            if w.where_ref in ready:
                try:
                    info.update(self.ray.get(w.where_ref))
                except Exception as e:
                    info["error"] = _first_line(e)
            layout.append(info)
        slots = self._live_slots()
        return {"engine": "ray", "address": self.address, "device": self.device,
                "requested": self._requested, "workers": len(self._workers),
                "nodes": {n[:12]: {"slots": s, "workers": sum(w.node == n for w in self._workers)}
                          for n, s in slots.items()},
                "layout": layout}

    def close(self) -> None:
        if self.losses:
            self.log("ray-summary", losses=self.losses, retries=self.retries)
        if self._owns and self.ray.is_initialized():
            self.ray.shutdown()
