"""The campaign loop: generate, run in isolated workers, record, then minimise.

Contract: ``run_campaign(cfg, progress)`` runs until the time or case budget is
spent or a stop signal (Ctrl-C, SIGTERM) arrives, and always ends by stopping
its workers and writing the summary. Each finding is written to disk the
moment its result arrives, before triage goes any further. A worker that dies
or hangs is restarted; its case is re-run eager-only on the fresh worker to
tell a compiler crash (a finding) from a program that crashes anyway.
``--resume`` continues a campaign folder without repeating or losing cases.
"""
from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fuzzcomp.generators import GENERATOR_VERSION, generate
from fuzzcomp.oracles import primary

from . import __version__
from .config import RunConfig
from .messages import CHECK, DIED, DONE, EAGER_ONLY, HARNESS_ERROR, TIMEOUT, Job
from .oracles_glue import crash_verdict
from .pipeline import finish_finding
from .report import write_summary
from .repro import versions
from .store import Store, StoreError
from .triage import bucket_of
from .engine import make_engine  # issue 9: local processes or Ray actors
from .worker import Worker, WorkerSettings


def case_seed(base: int, index: int) -> int:
    return (base * 1_000_003 + index) % (2 ** 31)


class Campaign:
    def __init__(self, cfg: RunConfig, progress=None, resume: bool = False):
        self.cfg = cfg
        self.store = Store(Path(cfg.out))
        self.progress = progress or (lambda *a, **k: None)
        self.resume = resume
        self.stop_reason: str | None = None
        self.next_index = 0
        self.done_seeds: set[int] = set()
        self.buckets: dict = {}        # BucketKey -> [finding ids]
        self.counts = {"cases": 0, "valid": 0, "findings": 0, "harness_errors": 0}
        self._jobs: dict[int, Job] = {}
        self._job_ids = 0
        self._attribution: dict[int, tuple[str, str]] = {}

    # ---- setup -----------------------------------------------------------------
    def _open_store(self) -> None:
        if self.resume:
            meta = self.store.meta()
            old = RunConfig.from_json(meta.get("config", {}))
            if old.seed != self.cfg.seed or old.backend != self.cfg.backend:
                raise StoreError(f"--resume: {self.cfg.out} was started with seed {old.seed} and backend "
                                 f"{old.backend!r}; pass the same values")
            for ev in self.store.events():
                if ev.get("event") == "case" and "index" in ev:
                    self.next_index = max(self.next_index, ev["index"] + 1)
                    self.done_seeds.add(ev.get("seed"))
                    self.counts["cases"] += 1
                    self.counts["valid"] += bool(ev.get("valid"))
            for fid in self.store.finding_ids():
                f = self.store.finding(fid)
                self.buckets.setdefault(f["bucket_obj"], []).append(fid)
                self.done_seeds.add(f["case_obj"].seed)
                self.counts["findings"] += 1
            self.store.event("resume", next_index=self.next_index)
        else:
            if (self.store.root / "campaign.json").exists():
                raise StoreError(f"{self.cfg.out} already holds a campaign: pass --resume to continue it, "
                                 "or choose another --out")
            self.store.create({"config": self.cfg.to_json(), "versions": versions(),
                               "generator_version": GENERATOR_VERSION, "started": time.time(),
                               "fuzzcomp": __version__})
            self.store.event("start", config=self.cfg.to_json())

    def _next_case(self):
        while True:
            index = self.next_index
            self.next_index += 1
            seed = case_seed(self.cfg.seed, index)
            if seed in self.done_seeds:
                continue
            case = generate(seed).with_compile(backend=self.cfg.backend, device=self.cfg.device,
                                               mode=self.cfg.mode)
            return index, case

    def _job(self, kind: str, case, index: int) -> Job:
        self._job_ids += 1
        job = Job(self._job_ids, kind, case, self.cfg.case_timeout_s)
        self._jobs[job.id] = (job, index)
        return job

    # ---- results ------------------------------------------------------------------
    def _record(self, case, verdicts, index: int) -> None:
        key = bucket_of(primary(verdicts))
        fid = self.store.record_finding(case, verdicts, key, origin=f"case {index}")  # write-ahead
        self.counts["findings"] += 1
        new = key not in self.buckets
        self.buckets.setdefault(key, []).append(fid)
        self.store.event("finding", id=fid, bucket=key.slug(), symptom=key.symptom, stage=key.stage,
                         seed=case.seed, new_bucket=new)
        self.progress("finding", key=key, fid=fid, new=new)

    def _handle(self, worker: Worker, result) -> None:
        job, index = self._jobs.pop(result.job_id)
        if job.kind == EAGER_ONLY:
            status, message = self._attribution.pop(job.id)
            valid = result.status == DONE and result.valid
            self._case_done(job.case, index, valid, status, {})
            if valid:
                self._record(job.case, [crash_verdict(status, message)], index)
            return
        if result.status in (DIED, TIMEOUT):
            follow = self._job(EAGER_ONLY, job.case, index)
            self._attribution[follow.id] = (result.status, result.message)
            worker.submit(follow)
            return
        if result.status == HARNESS_ERROR:
            self.counts["harness_errors"] += 1
            self.store.event("harness-error", seed=job.case.seed, message=result.message)
        self._case_done(job.case, index, result.valid, result.status, result.timings)
        if result.status == DONE and result.verdicts:
            self._record(job.case, result.verdicts, index)

    def _case_done(self, case, index, valid, status, timings) -> None:
        self.counts["cases"] += 1
        self.counts["valid"] += bool(valid)
        self.store.event("case", index=index, seed=case.seed, valid=bool(valid), status=status,
                         timings={k: round(v, 4) for k, v in timings.items()})
        self.progress("case", counts=self.counts)

    # ---- the loop -----------------------------------------------------------------------
    def _stop(self, signum, _frame) -> None:
        if self.stop_reason is None:
            self.stop_reason = f"signal {signal.Signals(signum).name}"
            self.progress("stopping", reason=self.stop_reason)

    def run(self) -> dict:
        # issue 9: the engine makes the workers and waits on them (local processes by default, Ray
        # actors with --ray); it connects first, so a bad --ray address fails before the store is touched
        self.engine = make_engine(self.cfg, log=self.store.event)
        try:
            self._open_store()
        except BaseException:
            self.engine.close()
            raise
        start = time.monotonic()
        budget = self.cfg.seconds
        share = self.cfg.minimize_share if self.cfg.minimize else 0.0
        gen_deadline = start + budget * (1 - share) if budget else None
        end = start + budget if budget else None
        settings = WorkerSettings(memory_mb=self.cfg.memory_mb,
                                  log_path=str(self.store.root / "workers.log"))
        workers = self.engine.workers(self.cfg.jobs, settings)  # issue 9
        old_handlers = {s: signal.signal(s, self._stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            for w in workers:
                w.start()
            self.store.event("engine", **self.engine.describe())  # issue 9
            self._generate(workers, gen_deadline)
            self._minimise_all(workers, end)
        finally:
            for w in workers:
                w.stop()
            self.engine.close()  # issue 9
            for s, h in old_handlers.items():
                signal.signal(s, h)
            self.store.event("stop", reason=self.stop_reason or "budget spent", counts=self.counts)
            summary = write_summary(self.store)
        return summary

    def _want_more(self, deadline) -> bool:
        if self.stop_reason:
            return False
        if deadline is not None and time.monotonic() >= deadline:
            return False
        return self.cfg.cases is None or self.counts["cases"] + self._in_flight() < self.cfg.cases

    def _in_flight(self) -> int:
        return sum(1 for job, _ in self._jobs.values() if job.kind == CHECK)

    def _generate(self, workers, deadline) -> None:
        while True:
            for w in workers:
                if not w.busy and self._want_more(deadline):
                    index, case = self._next_case()
                    w.submit(self._job(CHECK, case, index))
            busy = [w for w in workers if w.busy]
            if not busy:
                return
            if self.stop_reason:  # Ctrl-C: cases in flight are dropped (never recorded as done)
                for w in busy:
                    w.kill()
                    w.job = None
                self._jobs.clear()
                return
            self.engine.wait_any(busy, timeout=0.5)  # issue 9: pipes for local workers, refs for Ray
            for w in busy:
                result = w.collect()
                if result is not None:
                    self._handle(w, result)

    def _minimise_all(self, workers, end) -> None:
        """New buckets first, then more findings of crowded buckets, one thread per worker.

        Every finding of those gets a repro; minimisation and the fresh-process
        check run while time is left and no stop was asked for.
        """
        order = [fids[i] for i in range(self.cfg.max_minimize_per_bucket)
                 for fids in self.buckets.values() if i < len(fids)]
        order = [fid for fid in order if not self.store.path(fid, "status.json").exists()]
        if not order:
            return
        free = list(workers)

        def one(fid):
            w = free.pop()
            try:
                left = (end - time.monotonic()) if end else self.cfg.minimize_budget_s
                live = self.stop_reason is None and left > 5
                info = finish_finding(self.store, fid, w if live else None,
                                      minimize=live and self.cfg.minimize,
                                      budget_s=max(1.0, min(self.cfg.minimize_budget_s, left)),
                                      timeout_s=self.cfg.case_timeout_s, verify=live,
                                      should_stop=lambda: self.stop_reason is not None)
                self.store.event("minimized", **info)
                self.progress("minimized", info=info)
            finally:
                free.append(w)

        with ThreadPoolExecutor(max_workers=len(workers)) as pool:
            list(pool.map(one, order))


def run_campaign(cfg: RunConfig, progress=None, resume: bool = False) -> dict:
    os.makedirs(cfg.out, exist_ok=True)
    return Campaign(cfg, progress, resume).run()
