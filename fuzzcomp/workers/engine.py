"""Where a campaign's workers run: local processes (the default) or Ray actors.

Contract: an engine makes the campaign's workers and waits on them; the
campaign itself never knows which engine it has. Every worker it returns
implements the ``fuzzcomp.workers.worker.Worker`` interface (``start``, ``submit``,
``collect``, ``busy``, ``overdue``, ``kill``, ``stop``, ``run``, and a
writable ``job``). ``wait_any(workers, timeout)`` blocks until one of the busy
workers may have something to ``collect`` (or the timeout passes): local
workers are waited on through their pipes and process sentinels, Ray workers
through their object refs, so neither engine polls. ``describe()`` is a small
JSON-able dict for the event log; ``close()`` releases the engine (for Ray, the
driver's connection). ``make_engine(cfg, log)`` picks one from ``cfg.ray``; Ray
is imported only when asked for.
"""
from __future__ import annotations

import time
from multiprocessing.connection import wait

from fuzzcomp.workers.worker import Worker, WorkerSettings
from fuzzcomp.workers.ray_worker import RayEngine


class LocalEngine:
    """One spawned process per worker on this machine (``fuzzcomp.workers.worker``)."""

    def workers(self, count: int, settings: WorkerSettings) -> list[Worker]:
        self._count = count
        return [Worker(i, settings) for i in range(count)]

    def wait_any(self, workers, timeout: float) -> None:
        waitables = [x for w in workers for x in w.waitables()]
        if waitables:
            wait(waitables, timeout=timeout)
        else:
            time.sleep(min(timeout, 0.2))

    def describe(self) -> dict:
        return {"engine": "local", "workers": getattr(self, "_count", 0)}

    def close(self) -> None:
        pass


def make_engine(cfg, log=None):
    """The engine ``cfg`` asks for: ``cfg.ray`` None means local processes."""
    address = getattr(cfg, "ray", None)
    if address is None:
        return LocalEngine()
    return RayEngine(address, device=cfg.device, log=log)
