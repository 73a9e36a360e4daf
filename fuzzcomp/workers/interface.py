"""The worker interface the campaign, the minimiser and replay see, whatever runs the jobs.

Contract: a ``WorkerBase`` runs one ``Job`` at a time. The asynchronous half, which each kind of
worker implements, is ``start``/``restart``/``poll_ready``, ``submit(job)``, ``collect()`` (the
``JobResult`` once there is one, else None; a job past its timeout comes back as a timeout),
``waitables()``, ``overdue()``, ``kill()`` and ``stop()``, plus ``_wait_a_little(job)``, which
blocks for at most about a second until the job may have finished. The shared half is here:
``busy``, ``cancel()``/``clear_cancel()`` (from any thread: the running and every later ``run``
gives up at once) and ``run(job)``, submit-and-wait, the synchronous form used by the minimiser
and replay. ``fuzzcomp.workers.worker.Worker`` (a local process) and
``fuzzcomp.workers.ray_worker.RayWorker`` (a Ray actor) implement it.
"""
from __future__ import annotations

import abc
import threading

from fuzzcomp.base.messages import CANCELLED, Job, JobResult


class WorkerBase(abc.ABC):
    index: int
    job: Job | None = None

    def __init__(self) -> None:
        self.job = None
        self._cancel = threading.Event()

    # ---- what each kind of worker implements -------------------------------------------
    @abc.abstractmethod
    def start(self) -> None: ...

    @abc.abstractmethod
    def restart(self) -> None: ...

    @abc.abstractmethod
    def poll_ready(self) -> bool: ...

    @abc.abstractmethod
    def submit(self, job: Job) -> None: ...

    @abc.abstractmethod
    def collect(self, force_timeout: bool = False) -> JobResult | None: ...

    @abc.abstractmethod
    def waitables(self) -> list: ...

    @abc.abstractmethod
    def overdue(self) -> bool: ...

    @abc.abstractmethod
    def kill(self) -> None: ...

    @abc.abstractmethod
    def stop(self) -> None: ...

    @abc.abstractmethod
    def _wait_a_little(self, job: Job) -> None:
        """Block for at most about a second, or until ``job`` may have finished."""

    # ---- shared ------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.job is not None

    def cancel(self) -> None:
        """From any thread: make the running and all later ``run`` calls give up at once."""
        self._cancel.set()

    def clear_cancel(self) -> None:
        self._cancel.clear()

    def run(self, job: Job) -> JobResult:
        """Submit and wait: the synchronous form used by the minimiser and replay."""
        if self._cancel.is_set():
            return JobResult(job.id, CANCELLED, message="cancelled")
        self.submit(job)
        while True:
            if self._cancel.is_set():
                self.kill()
                self.job = None
                return JobResult(job.id, CANCELLED, message="cancelled")
            self._wait_a_little(job)
            result = self.collect()
            if result is not None:
                return result
