"""The campaign loop: generate, run in isolated workers, record, minimise alongside.

Contract: ``run_campaign(cfg, progress)`` runs until the time or case budget is
spent or a stop signal (Ctrl-C, SIGTERM) arrives, and always ends by stopping
its workers and writing the summary and the HTML report.

- Write-ahead: each finding is on disk (``findings/<id>/finding.json``) before
  its ``case`` event is logged and before anything else happens to it.
- Isolation: a worker that dies or hangs is restarted; its case is re-run
  eager-only to tell a compiler crash (a finding) from a program that crashes
  anyway. A case that runs out of memory under the worker's cap is an ``oom``
  event, never a finding.
- Minimisation runs alongside, in ``minimiser_pool``: up to ``max_minimizers``
  findings at once, each on a worker lent from the pool, one per bucket at a
  time, a bucket with no confirmed repro first. Near the deadline generation
  stops early so that every bucket still without a repro gets one (the time
  kept is the measured cost of a minimisation per round of free workers, at
  most a quarter of the budget).
- Confirmation: a repro counts only when it fails in all ``confirm_runs`` fresh
  processes (see ``pipeline.confirm_repro``).
- Time: no case starts after the deadline, and cases still running at the
  deadline are dropped (logged, re-run on resume). Minimisations are cancelled
  at the deadline; each keeps what it reduced so far and writes its repro
  unchecked. Workers start in parallel and stop in parallel
  (``worker.stop_all``), so a campaign ends a few seconds after its budget.
- Stop: the first SIGINT/SIGTERM stops generation, drops cases in flight,
  saves, reports and returns (the CLI then exits 130); a second one interrupts,
  except while saving: then it only cuts the waits, and the summary and
  reports are still written. ``--max-findings`` ends generation after that many
  findings (they are still minimised); ``--symptoms`` records only the listed
  symptom classes (the others are logged as ``filtered`` events).
- One live process per folder: the store's lock is taken before anything is
  read, and released at the end. ``campaign.json`` keeps the budget left at the
  stop, so ``run --resume DIR`` alone continues with it.
- Resume: ``resume=True`` continues the folder: every case index not yet
  logged (dropped, or after the last) is run, none twice; findings without a
  final ``status.json`` are queued for minimisation again.
- A failed disk write ends the campaign with ``CampaignError`` naming what
  could not be saved (the seed of an unsaved finding, so it can be replayed).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import threading
import time
import shlex
from pathlib import Path

from fuzzcomp.generators import GENERATOR_VERSION
from fuzzcomp.generators.build import GenConfig
from fuzzcomp.generators.ir import op_names
from fuzzcomp.oracles import primary

from fuzzcomp import __version__
from fuzzcomp.base.config import ConfigError, RunConfig
from fuzzcomp.base.messages import CHECK, DIED, DONE, EAGER_ONLY, HARNESS_ERROR, Job, TIMEOUT
from fuzzcomp.workers.isolation_verdicts import blames_compiler, crash_verdict, needs_eager_rerun
from fuzzcomp.campaign.cases import case_features, case_seed
from fuzzcomp.campaign.minimiser_pool import MinimiserPool
from fuzzcomp.campaign.worker_env import gpu_count, inductor_cache_dir
from fuzzcomp.render.repro import versions
from fuzzcomp.findings.store import Store, StoreError, write_json
from fuzzcomp.findings.triage import bucket_of
from fuzzcomp.workers.engine import make_engine  # local processes or Ray actors
from fuzzcomp.campaign.feedback import Feedback
from fuzzcomp.campaign.novelty import Novelty
from fuzzcomp.workers.worker import stop_all, Worker, WorkerSettings, WorkerStartError
from fuzzcomp.report.html import write_html
from fuzzcomp.report.summary import write_summary

#: Messages by which torch or Python report an allocation refused by the memory cap.
OOM_PATTERN = re.compile(r"can't allocate memory|not enough memory|out of memory|MemoryError|"
                         r"std::bad_alloc|Cannot allocate memory", re.I)
STOP_JOIN_S = 10.0      # the most we wait, in all, for cancelled minimisations to save their work


class CampaignError(RuntimeError):
    """The campaign could not go on (a failed disk write); the message says what was saved."""


def _is_oom(text: str) -> bool:
    return bool(OOM_PATTERN.search(text or ""))


class Campaign(MinimiserPool):
    def __init__(self, cfg: RunConfig, progress=None, resume: bool = False):
        self.cfg = cfg
        # on CUDA fp16/bf16 weighted up and random ops off (GenConfig.for_device says why)
        self.gen_config = GenConfig.for_device(cfg.device, mode=cfg.mode, **dict(cfg.generator))
        self.store = Store(Path(cfg.out))
        self.progress = progress or (lambda *a, **k: None)
        self.resume = resume
        self.stop_reason: str | None = None
        self.next_index = 0
        self.pending: list[int] = []   # indices to run before next_index (resume)
        self.done: set[int] = set()
        self.buckets: dict = {}        # BucketKey -> [finding ids]
        self.counts = {"cases": 0, "valid": 0, "findings": 0, "harness_errors": 0, "oom": 0}
        # (known bug?, rank in bucket, arrival, finding id): what is new goes first
        self.queue: list[tuple[int, int, int, str]] = []
        self._known: dict = {}            # finding id -> the registry match that claims it
        self._arrivals = 0
        self._jobs: dict[int, tuple[Job, int]] = {}
        self._job_ids = 0
        self._attribution: dict[int, object] = {}  # eager-only job id -> the JobResult it re-checks
        self._t_case: dict[int, tuple[float, float]] = {}  # index -> (generate s, submitted at)
        self._stopping = threading.Event()
        self._minimisers: list[dict] = []  # each {"thread", "worker", "fid", "slug", "t0", "result", ...}
        self._has_repro: set[str] = set()  # buckets (slugs) with a confirmed repro
        self._slug_of: dict[str, str] = {}  # finding id -> bucket slug
        self._minimise_spent = 0.0          # worker seconds of finished minimisations, and how many
        self._minimise_count = 0
        self._check_spent = 0.0             # the same for known bugs' label checks
        self._check_count = 0
        self._confirm_times: list[float] = []  # seconds of each finished fresh-process check
        self._shutting_down = False
        self._hurry = threading.Event()     # a signal while saving: cut the waits short
        self._tail_logged = False
        self.end_reason: str | None = None  # why generation ended early (--max-findings)
        self._end = None
        self.minimise_s = 0.0
        self.t_start = time.monotonic()
        self.workers: list = []
        self.novelty = Novelty(cfg.novelty, self.gen_config, self.store.root)
        self.feedback = Feedback(cfg.feedback, cfg.seed, self.novelty.config(), self.store.root)
        self._found: dict[int, str] = {}    # case index -> "new" / "known" / "seen": its finding's bucket

    # ---- setup -----------------------------------------------------------------
    def _open_store(self) -> None:
        if self.resume:
            self._load_previous()
        else:
            if (self.store.root / "campaign.json").exists():
                raise StoreError(f"{self.cfg.out} already holds a campaign: pass --resume to continue it, "
                                 "or choose another --out")
            self.store.create({"config": self.cfg.to_json(), "versions": versions(),
                               "generator_version": GENERATOR_VERSION, "started": time.time(),
                               "fuzzcomp": __version__})
            self.store.event("start", config=self.cfg.to_json())

    def _load_previous(self) -> None:
        meta = self.store.meta()
        old = RunConfig.from_json(meta.get("config", {}))
        for name in ("seed", "backend", "device", "mode", "generator"):
            if getattr(old, name) != getattr(self.cfg, name):
                raise StoreError(f"--resume: {self.cfg.out} was started with {name} {getattr(old, name)!r}, "
                                 f"not {getattr(self.cfg, name)!r}; pass the same value")
        if meta.get("generator_version") not in (None, GENERATOR_VERSION):
            raise StoreError(f"--resume: {self.cfg.out} was made by generator {meta['generator_version']}, "
                             f"this is {GENERATOR_VERSION}; start a new campaign")
        torn = self.store.repair_log()
        for ev in self.store.events():
            if ev.get("event") == "case" and isinstance(ev.get("index"), int):
                if ev["index"] in self.done:
                    continue
                self.done.add(ev["index"])
                self.counts["cases"] += 1
                self.counts["valid"] += bool(ev.get("valid"))
                self.counts["oom"] += ev.get("status") == "oom"
        unreadable = []
        for fid in self.store.finding_ids():
            try:
                f = self.store.finding(fid)
            except StoreError as e:
                unreadable.append(fid)
                self.progress("warning", message=str(e))
                continue
            key = f["bucket_obj"]
            rank = len(self.buckets.setdefault(key, []))
            self.buckets[key].append(fid)
            self._slug_of[fid] = key.slug()
            self._note_known(fid, key, f["case_obj"])
            self.counts["findings"] += 1
            m = re.fullmatch(r"case (\d+)", str(f.get("origin", "")))
            if m and int(m.group(1)) not in self.done:  # finding saved, case event lost: recover it
                index = int(m.group(1))
                self.done.add(index)
                self.counts["cases"] += 1
                self.counts["valid"] += 1
                self.store.event("case", index=index, seed=f["case_obj"].seed, valid=True,
                                 status="recovered", timings={})
            status = self.store.status(fid)
            if status is None or status.get("pending"):  # never finished (or cut mid-way): again
                self._enqueue(fid, rank)
            elif status.get("confirmed"):
                self._has_repro.add(key.slug())
        self.feedback.load(self.store.events())
        self.novelty.load(self.store)
        self.feedback.gen_config = self.novelty.config()
        self.next_index = max(self.done, default=-1) + 1
        self.pending = sorted(set(range(self.next_index)) - self.done)
        self.store.event("resume", next_index=self.next_index, rerun=len(self.pending),
                         torn_lines=torn, unreadable_findings=unreadable, queued=len(self.queue))
        self.progress("resume", done=len(self.done), rerun=len(self.pending), findings=self.counts["findings"])

    def _next_case(self):
        index = self.pending.pop(0) if self.pending else self._take_index()
        case = self.feedback.case(index, case_seed(self.cfg.seed, index))
        case = case.with_compile(backend=self.cfg.backend, device=self.cfg.device, mode=self.cfg.mode)
        return index, case

    def _take_index(self) -> int:
        self.next_index += 1
        return self.next_index - 1

    def _job(self, kind: str, case, index: int) -> Job:
        self._job_ids += 1
        job = Job(self._job_ids, kind, case, self.cfg.case_timeout_s,
                  compile_timeout_s=self.cfg.compile_timeout_s, run_timeout_s=self.cfg.run_timeout_s)
        self._jobs[job.id] = (job, index)
        return job

    # ---- results ------------------------------------------------------------------
    def _record(self, case, verdicts, index: int) -> None:
        if self.cfg.symptoms is not None:  # --symptoms: the other classes are neither judged nor kept
            kept = [v for v in verdicts if v.symptom in self.cfg.symptoms]
            if not kept:
                self.store.event("filtered", index=index, seed=case.seed,
                                 symptoms=sorted({v.symptom for v in verdicts}))
                return
            verdicts = kept
        key = bucket_of(primary(verdicts))
        try:
            fid = self.store.record_finding(case, verdicts, key, origin=f"case {index}")  # write-ahead
        except OSError as e:
            raise CampaignError(f"could not save the finding of case {index} (seed {case.seed}; "
                                f"`fuzzcomp replay {case.seed} --backend {self.cfg.backend}` shows it "
                                f"again): {e.strerror or e}") from None
        self.counts["findings"] += 1
        new = key not in self.buckets
        rank = len(self.buckets.setdefault(key, []))
        self.buckets[key].append(fid)
        self._slug_of[fid] = key.slug()
        known = self._note_known(fid, key, case)
        self._found[index] = "new" if new and known is None else ("known" if known else "seen")
        self.store.event("finding", id=fid, bucket=key.slug(), symptom=key.symptom, stage=key.stage,
                         signature=key.signature, seed=case.seed, index=index, new_bucket=new, known=known)
        self._enqueue(fid, rank)
        self.progress("finding", key=key, fid=fid, new=new, counts=self.counts, known=known)
        if self.cfg.max_findings is not None and self.counts["findings"] >= self.cfg.max_findings \
                and self.end_reason is None:
            self.end_reason = f"--max-findings {self.cfg.max_findings} reached"
            self.store.event("generation-over", reason=self.end_reason)

    def _handle(self, worker: Worker, result) -> None:
        job, index = self._jobs.pop(result.job_id)
        if job.kind == EAGER_ONLY:
            first = self._attribution.pop(job.id)
            valid = result.status == DONE and result.valid
            if blames_compiler(first, result):
                self._record(job.case, [crash_verdict(first.status, first.message)], index)
            elif valid:  # eager alone was slow too: the program's cost, not the compiler's
                valid, first.status = False, "slow-program"
            self._case_done(job.case, index, valid, first.status, result.timings)
            return
        if result.status == TIMEOUT and not needs_eager_rerun(result):  # eager itself is too slow
            self.store.event("worker-restart", worker=worker.index, reason=result.status,
                             message=result.message, index=index)
            self._case_done(job.case, index, False, "eager-timeout", result.timings)
            return
        if result.status in (DIED, TIMEOUT):
            follow = self._job(EAGER_ONLY, job.case, index)
            self._attribution[follow.id] = result
            self.store.event("worker-restart", worker=worker.index, reason=result.status,
                             message=result.message, index=index)
            worker.submit(follow)
            return
        oom = (result.status == HARNESS_ERROR and _is_oom(result.message)) or \
            (result.status == DONE and any(_is_oom(v.detail) for v in result.verdicts))
        if oom:
            self.counts["oom"] += 1
            detail = result.message or next(v.detail for v in result.verdicts if _is_oom(v.detail))
            self.store.event("oom", index=index, seed=job.case.seed, memory_mb=self.cfg.memory_mb,
                             detail=detail[:300])
            worker.restart()
            self._case_done(job.case, index, False, "oom", result.timings)
            return
        if result.status == HARNESS_ERROR:
            self.counts["harness_errors"] += 1
            self.store.event("harness-error", seed=job.case.seed, index=index, message=result.message)
        if result.status == DONE and result.verdicts:
            self._record(job.case, result.verdicts, index)
        stats = (result.stats or {}) if result.status == DONE else {}
        why = None if result.valid else stats.get("eager_error")
        self._case_done(job.case, index, result.valid, result.status, result.timings, why,
                        stats.get("eager_kernel_bugs"),
                        {k: stats[k] for k in ("captured_ops", "graphs", "signals") if stats.get(k) is not None})

    def _case_done(self, case, index, valid, status, timings, why: str | None = None,
                   eager_kernel_bugs=None, captured=None) -> None:
        timings = dict(timings or {})
        if index in self._t_case:
            gen_s, submitted = self._t_case.pop(index)
            timings["generate"] = gen_s
            timings["job"] = time.monotonic() - submitted  # worker wall time, as the parent saw it
        self.done.add(index)
        self.counts["cases"] += 1
        self.counts["valid"] += bool(valid)
        self.store.event("case", index=index, seed=case.seed, valid=bool(valid), status=status,
                         timings={k: round(v, 4) for k, v in timings.items()},
                         ops=op_names(case.program), features=case_features(case),
                         **({"eager_error": why} if why else {}),
                         **({"eager_kernel_bugs": list(eager_kernel_bugs)} if eager_kernel_bugs else {}),
                         **(captured or {}),
                         **({"steered": len(self.novelty.triggers)} if self.novelty.on else {}),
                         **self.feedback.done(index, valid, (captured or {}).get("signals"),
                                              found=self._found.pop(index, None)))
        self.progress("case", counts=self.counts)

    def _drop_in_flight(self, workers, why: str) -> None:
        """Kill the cases still running; they are logged as dropped and re-run on resume."""
        for w in workers:
            if w.busy:
                job, index = self._jobs.get(w.job.id, (w.job, None))
                w.kill()
                w.job = None
                self.store.event("dropped", index=index, seed=job.case.seed, reason=why)
        self._jobs.clear()
        self._attribution.clear()
        self._t_case.clear()

    # ---- signals --------------------------------------------------------------------
    def _stop(self, signum, _frame) -> None:
        if self.stop_reason is None:
            self.stop_reason = f"signal {signal.Signals(signum).name}"
            self._stopping.set()
            self.progress("stopping", reason=self.stop_reason)
        elif self._shutting_down:
            # already saving: waiting is cut short, but the summary and reports are still written
            self._hurry.set()
        else:
            raise KeyboardInterrupt  # a second signal: stop waiting (everything saved is atomic)

    # ---- the loop ---------------------------------------------------------------------
    def run(self) -> dict:
        # issue 9: the engine makes the workers and waits on them (local processes by default, Ray
        # actors with --ray); it connects first, so a bad --ray address fails before the store is touched
        self.engine = make_engine(self.cfg, log=self.store.event)
        try:
            self.store.lock()  # one live process per folder: before anything is read or written
            self._open_store()
        except BaseException:
            self.store.unlock()
            self.engine.close()
            raise
        old_handlers = {s: signal.signal(s, self._stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            return self._run_locked()
        finally:
            for s, h in old_handlers.items():
                signal.signal(s, h)
            self.store.unlock()

    def _run_locked(self) -> dict:
        self.t_start = time.monotonic()
        end = self.t_start + self.cfg.seconds if self.cfg.seconds else None
        self._end = end
        cache_dir, drop_cache = inductor_cache_dir()  # see worker.py: "Caches"
        settings = WorkerSettings(memory_mb=self.cfg.memory_mb, recycle_every=self.cfg.recycle_every,
                                  log_path=str(self.store.root / "workers.log"), cache_dir=cache_dir,
                                  gpus=gpu_count() if self.cfg.device == "cuda" else 0,
                                  strict_precision=self.cfg.half_rounding == "strict")
        workers = self.workers = self.engine.workers(self.cfg.jobs, settings)  # issue 9
        self.progress("starting", jobs=len(workers))
        failure = None
        try:
            for w in workers:  # spawns only: every worker imports torch at the same time
                w.start()
            self.store.event("engine", **self.engine.describe())  # issue 9
            self._loop(workers, end)
        except (CampaignError, WorkerStartError, ConfigError) as e:  # ConfigError: RayEngineError
            failure = str(e)
        except OSError as e:
            where = f" ({e.filename})" if getattr(e, "filename", None) else ""
            failure = f"a disk write failed in {self.cfg.out}: {e.strerror or e}{where}"
        finally:
            self._shutting_down = True
            self._stopping.set()
            self._end_minimisers(wait_s=STOP_JOIN_S)
            stop_all(workers, grace_s=2.0, hurry=self._hurry)
            try:
                self.store.event("workers", startup_s=round(sum(getattr(w, "startup_s", 0.0) for w in workers), 1),
                                 restarts=sum(getattr(w, "restarts", 0) for w in workers))
            except OSError:
                pass
            self.engine.close()  # issue 9
            if drop_cache:
                shutil.rmtree(cache_dir, ignore_errors=True)
        summary = self._finish(failure)
        if failure:
            saved = self.counts["findings"]
            raise CampaignError(f"campaign stopped: {failure}. {saved} findings are saved in {self.cfg.out}; "
                                f"fix the cause, then continue with --resume {shlex.quote(str(self.cfg.out))}")
        return summary

    def _finish(self, failure: str | None) -> dict | None:
        reason = failure or self.stop_reason or self.end_reason or "budget spent"
        try:
            self.feedback.close()
            self.novelty.save()
            self.store.event("stop", reason=reason, counts=self.counts, minimise_s=round(self.minimise_s, 1))
            self._save_budget()
            summary = write_summary(self.store)
            write_html(self.store, summary)
            return summary
        except OSError as e:
            if failure:
                return None
            raise CampaignError(f"could not write the summary in {self.cfg.out}: {e.strerror or e}") from None

    def _save_budget(self) -> None:
        """Remember what the budget was and how much of it is spent, so `run --resume DIR` alone
        continues with what is left."""
        meta = self.store.meta()
        spent = float((meta.get("budget") or {}).get("spent_s", 0.0)) + (time.monotonic() - self.t_start)
        meta["budget"] = {"seconds": self.cfg.seconds, "cases": self.cfg.cases, "spent_s": round(spent, 1),
                          "remaining_s": None if self.cfg.seconds is None
                          else round(max(0.0, self.cfg.seconds - (time.monotonic() - self.t_start)), 1)}
        write_json(self.store.root / "campaign.json", meta)

    def _want_more(self, end) -> bool:
        if self.stop_reason or self.end_reason:
            return False
        if end is not None and time.monotonic() >= end:
            return False
        if self._generation_over(end):
            if not self._tail_logged:
                self._tail_logged = True
                self.store.event("generation-over", reason="time left kept for minimising every bucket",
                                 left_s=round(end - time.monotonic(), 1))
            return False
        in_flight = len(self._jobs)  # one per case: a check, or the eager-only re-run of a crash
        return self.cfg.cases is None or self.counts["cases"] + in_flight < self.cfg.cases

    def _loop(self, workers, end) -> None:
        pool = list(workers)   # workers not lent to a minimiser
        while True:
            self._reap_minimisers(pool)
            self._police_minimisers(end)
            generating = self._want_more(end)
            self._maybe_minimise(pool, end, generating)
            for w in pool:
                if not w.busy and self._want_more(end) and w.poll_ready():
                    t0 = time.monotonic()
                    index, case = self._next_case()
                    self._t_case[index] = (time.monotonic() - t0, time.monotonic())
                    w.submit(self._job(CHECK, case, index))
            busy = [w for w in pool if w.busy]
            if self.stop_reason:
                self._drop_in_flight(busy, self.stop_reason)
                return
            now = time.monotonic()
            if end is not None and now >= end:  # the budget is the budget: what runs now is dropped
                self._drop_in_flight(busy, "time budget spent")
                return
            if not busy and not self._minimisers and not generating:
                if not self.queue or not self.cfg.minimize or (end is not None and now >= end - 10):
                    return
            self.progress("phase", phase="generating" if generating else
                          ("minimising" if self._minimisers else "finishing"),
                          minimising=[m["fid"] for m in self._minimisers])
            # issue 9: pipes and sentinels for local workers, object refs for Ray workers
            self.engine.wait_any([w for w in pool if w.busy or not w.poll_ready()], timeout=0.5)
            if self.stop_reason:  # results after a stop may be the signal's own damage: dropped
                continue
            for w in busy:
                result = w.collect()
                if result is not None:
                    self._handle(w, result)

    # ---- interleaved minimisation ---------------------------------------------------------


def run_campaign(cfg: RunConfig, progress=None, resume: bool = False) -> dict:
    try:
        os.makedirs(cfg.out, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot create {cfg.out}: {e.strerror or e}") from None
    return Campaign(cfg, progress, resume).run()
