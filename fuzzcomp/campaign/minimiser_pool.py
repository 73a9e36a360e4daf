"""The campaign's minimiser pool: which queued finding is minimised next, on which idle worker, and
for how long.

Contract: ``MinimiserPool`` is mixed into ``Campaign``; it reads the campaign's ``cfg``, ``store``,
``queue`` (``(known?, rank, arrival, finding id)``), ``progress`` and stop events, and keeps
``_minimisers`` (one record per running minimisation: its worker, thread, deadline and result).
``_enqueue`` queues a finding (a known bug whose identity is settled is recorded at once, with no
worker: ``pipeline.settle_known``); ``_generation_over`` keeps the time the new bugs waiting still
need at the budget's end, and the known bugs' label checks waiting, with a standing reserve of one
measured minimisation and its check. Each
minimisation runs ``pipeline.finish_finding`` in a thread on a worker taken from the pool;
a new bug goes first, a known one last; while cases are still generated, minimisation takes at most the
configured share of worker time and one worker always keeps generating. The reduction stops early
enough for the fresh-process check to finish before the budget's end; past its deadline (its
allowance, or the campaign's budget) a minimisation is cancelled; reaped ones return their
worker and refresh the summary and HTML report.
"""
from __future__ import annotations

import json
import threading
import time
import traceback
from pathlib import Path

from fuzzcomp.base.config import default_minimizers
from fuzzcomp.campaign.novelty import worth_learning
from fuzzcomp.campaign.pipeline import KNOWN_CHECK_S, costs_nothing, finish_finding, settle_known
from fuzzcomp.findings.known import claim
from fuzzcomp.findings.store import case_from_json
from fuzzcomp.findings.store import StoreError
from fuzzcomp.reduce.typecheck import import_lazy_torch
from fuzzcomp.report.html import write_html
from fuzzcomp.report.summary import write_summary


class MinimiserPool:
    """The minimisation half of ``Campaign`` (see the module doc)."""

    def _note_known(self, fid: str, key, case) -> str | None:
        """The registry entry that claims this finding (None: new), remembered for the queue."""
        m = claim(key, case)
        if m is None:
            return None
        self._known[fid] = m
        return m.bug.id

    def _settle(self, fid: str) -> bool:
        """A known finding that needs no worker (``pipeline.costs_nothing``) is recorded now."""
        m = self._known.get(fid)
        if m is None or not costs_nothing(self.store, fid, m):
            return False
        settle_known(self.store, fid, self._slug_of[fid], m)
        self.store.event("known-settled", id=fid, known=m.bug.id, bucket=self._slug_of[fid])
        return True

    def _enqueue(self, fid: str, rank: int) -> None:
        if self._settle(fid):  # a settled known bug is recorded now, and never takes a worker
            return
        if rank < self.cfg.max_minimize_per_bucket:
            self._arrivals += 1
            self.queue.append((int(fid in self._known), rank, self._arrivals, fid))
            self.queue.sort()

    def _pick(self, generating: bool = False) -> int | None:
        """Index in the queue of the next finding to minimise: new bugs before known ones, and
        known ones only once generation is over (their time is what is left); among them a bucket
        with no confirmed repro and none being made first, then queue order (first findings of
        buckets, then arrival)."""
        busy = {m["slug"] for m in self._minimisers}
        for known in ((0,) if generating else (0, 1)):
            for i, q in enumerate(self.queue):
                slug = self._slug_of.get(q[-1])
                if q[0] == known and slug not in self._has_repro and slug not in busy:
                    return i
            for i, q in enumerate(self.queue):
                if q[0] == known and self._slug_of.get(q[-1]) not in busy:
                    return i
        return None

    def _generation_over(self, end) -> bool:
        """Generation ends early when only the time still needed to minimise every bucket is left.

        One round of minimisation stays in reserve even when no bucket waits: a bucket found in
        the budget's last seconds would otherwise end the campaign without a repro (a 30-minute
        campaign's last finding came 1 s before its end; an 8-minute H200 campaign's came 68 s
        before, and a minimisation with its fresh-process check takes about 150 s there). That
        standing reserve is the measured time of one minimisation and its check, at most a quarter
        of the budget; with buckets waiting it is their rounds, at most a quarter too. Known bugs'
        label checks waiting add their rounds at a check's measured pace (``KNOWN_CHECK_S`` before
        the first)."""
        if end is None or not self.cfg.minimize:
            return False
        busy = {m["slug"] for m in self._minimisers}
        waiting = {self._slug_of.get(q[-1]) for q in self.queue if q[-1] not in self._known} - \
            self._has_repro - busy
        # a known bug's label check (one per bucket, queued only while unchecked) is short, but
        # without its time a rule's unchecked claim stood at the end (CPU 1516: cba82c1c was
        # another entry's bug, and the reserve, kept for new bugs only, left it no worker)
        checks = {self._slug_of.get(q[-1]) for q in self.queue if q[-1] in self._known} - busy
        per = (self._minimise_spent / self._minimise_count) if self._minimise_count else \
            min(self.cfg.minimize_budget_s, 60.0) + 30.0
        per_check = (self._check_spent / self._check_count) if self._check_count else KNOWN_CHECK_S
        width = max(1, len(self.workers))
        need = -(-len(waiting) // width) * per + -(-len(checks) // width) * per_check
        # with nothing waiting, one minimisation stays in reserve (a bucket found in the last
        # seconds); either way a quarter of the budget at most (short campaigns)
        reserve = min(need if waiting else max(need, per), 0.25 * (self.cfg.seconds or 0))
        return time.monotonic() >= end - reserve

    def _maybe_minimise(self, pool, end, generating: bool) -> None:
        limit = (self.cfg.max_minimizers or default_minimizers(self.cfg.jobs)) if generating else len(pool) + \
            len(self._minimisers)
        while self.queue and self.cfg.minimize and not self.stop_reason and len(self._minimisers) < limit:
            now = time.monotonic()
            left = (end - now) if end is not None else None
            if left is not None and left < 10:
                return
            free = [w for w in pool if not w.busy]
            if not free or (generating and self.cfg.jobs > 1 and len(pool) <= 1):
                return  # with several workers, one always keeps generating
            i = self._pick(generating)
            if i is None:
                return
            fid = self.queue[i][-1]
            if self._settle(fid):  # its entry was label-checked since it was queued: nothing to do
                self.queue.pop(i)
                continue
            new_bucket = self._slug_of.get(fid) not in self._has_repro and fid not in self._known
            worker_s = (now - self.t_start) * self.cfg.jobs
            # a bucket with no repro yet may take more of the worker time than the share
            share = self.cfg.minimize_share if not new_bucket else \
                (1.0 if self.cfg.jobs > 1 else max(self.cfg.minimize_share, 0.5))
            if generating and self.minimise_s + self._running_minimise_s(now) > share * worker_s:
                return
            self.queue.pop(i)
            self._start_minimiser(pool, free[-1], fid, end, left)

    def _confirm_reserve(self) -> float:
        """Seconds to keep for the fresh-process check of one repro: the mean of this campaign's
        checks (20 s a run before the first: a CUDA repro's start-up and compile), with a margin."""
        done = self._confirm_times
        mean = sum(done) / len(done) if done else 20.0 * max(1, self.cfg.confirm_runs)
        return 1.25 * mean + 5.0  # a check runs a little longer than the mean half the time

    def _running_minimise_s(self, now: float) -> float:
        return sum(now - m["t0"] for m in self._minimisers)

    def _start_minimiser(self, pool, w, fid: str, end, left) -> None:
        import_lazy_torch()  # here, in the main thread: never two threads inside one lazy import
        pool.remove(w)
        now = time.monotonic()
        budget = self.cfg.minimize_budget_s if left is None else max(5.0, min(self.cfg.minimize_budget_s,
                                                                             left - 5))
        # reduction budget plus one stage ladder; then the fresh-process checks with their own timeout
        deadline = now + budget + min(self.cfg.case_timeout_s, 120.0)
        police = deadline + self.cfg.confirm_runs * max(self.cfg.case_timeout_s, 60.0) + 15.0
        if end is not None:  # the fresh-process check keeps its time before the budget's end
            deadline, police = max(now + 5.0, min(deadline, end - self._confirm_reserve())), min(police, end)
        m = {"worker": w, "fid": fid, "slug": self._slug_of.get(fid), "t0": now, "result": None,
             "deadline": police, "stop": threading.Event()}

        def should_stop() -> bool:
            return self._stopping.is_set() or m["stop"].is_set()

        def body():
            try:
                m["result"] = finish_finding(self.store, fid, w, minimize=True, budget_s=budget,
                                             timeout_s=self.cfg.case_timeout_s, verify=True,
                                             should_stop=should_stop, deadline=deadline,
                                             phase_limits=(self.cfg.compile_timeout_s,
                                                           self.cfg.run_timeout_s),
                                             confirm_runs=self.cfg.confirm_runs)
            except Exception as e:  # a harness bug must not end the campaign; the finding stays
                tb = traceback.extract_tb(e.__traceback__)[-1]  # where: a harness error must be findable
                m["result"] = {"id": fid, "error": f"{type(e).__name__}: {e}",
                               "where": f"{Path(tb.filename).name}:{tb.lineno} ({tb.name})"}

        m["thread"] = threading.Thread(target=body, name=f"fuzzcomp-minimise-{fid}", daemon=True)
        self._minimisers.append(m)
        self.store.event("minimize-start", id=fid, worker=w.index, budget_s=round(budget, 1),
                         running=len(self._minimisers))
        self.progress("minimising", fid=fid)
        m["thread"].start()

    def _police_minimisers(self, end) -> None:
        """Cancel a minimisation past its deadline (its allowance, or the campaign's budget)."""
        now = time.monotonic()
        for m in self._minimisers:
            if m["stop"].is_set():
                continue
            if now >= m["deadline"] or (end is not None and now >= end):
                m["stop"].set()
                m["worker"].cancel()  # a probe in flight returns "cancelled" at once
                self.store.event("minimize-cancelled", id=m["fid"], after_s=round(now - m["t0"], 1),
                                 reason="campaign budget spent" if end is not None and now >= end
                                 else "minimisation allowance spent")

    def _reap_minimisers(self, pool) -> None:
        for m in [m for m in self._minimisers if not m["thread"].is_alive()]:
            self._minimisers.remove(m)
            spent = time.monotonic() - m["t0"]
            self.minimise_s += spent
            m["worker"].clear_cancel()
            pool.append(m["worker"])
            info = dict(m["result"] or {"id": m["fid"], "error": "no result"})
            info["worker_s"] = round(spent, 1)
            if "error" not in info and info.get("known"):  # a label check that stayed known
                self._check_spent += spent
                self._check_count += 1
            elif "error" not in info:
                self._minimise_spent += spent
                self._minimise_count += 1
                if info.get("confirm_s") is not None and info.get("confirmed") is not None:
                    self._confirm_times.append(info["confirm_s"])
                if info.get("confirmed") and m["slug"]:
                    self._has_repro.add(m["slug"])
            self.store.event("minimized", **info)
            self._steer(m["fid"], m["slug"], info)
            self.progress("minimized", info=info)
            self._refresh_reports()

    def _steer(self, fid: str, slug: str | None, info: dict) -> None:
        """A bucket's minimised program lowers its trigger in generation (``--novelty on``)."""
        why = worth_learning(info) if self.novelty.on and slug and "minimize_s" in info else None
        if why is None:
            return
        try:
            small = case_from_json(json.loads(self.store.path(fid, "minimized.json").read_text())["case"])
        except (OSError, ValueError, KeyError):
            return
        if self.novelty.learn(slug, small, why):
            self.feedback.gen_config = self.novelty.config()
            t = self.novelty.triggers[f"campaign: {slug}"]
            self.store.event("steered", bucket=slug, why=why, ops=sorted(t.ops), caps=sorted(t.caps),
                             kinds=sorted(t.kinds))

    def _refresh_reports(self) -> None:
        """Every minimisation shows in summary.md, summary.json and report.html at once."""
        try:
            write_html(self.store, write_summary(self.store))
        except (OSError, StoreError) as e:
            self.progress("warning", message=f"could not refresh the summary: {e}")

    def _end_minimisers(self, wait_s: float) -> None:
        """Cancel every minimisation and give them ``wait_s`` in all (not each) to save their work."""
        for m in self._minimisers:
            m["stop"].set()
            m["worker"].cancel()
        until = time.monotonic() + wait_s
        for m in list(self._minimisers):
            while m["thread"].is_alive() and time.monotonic() < until and not self._hurry.is_set():
                m["thread"].join(0.2)
        for m in [m for m in self._minimisers if m["thread"].is_alive()]:
            # leave it: its finding stays queued (no final status.json)
            self._minimisers.remove(m)
            spent = time.monotonic() - m["t0"]
            self.minimise_s += spent
            try:
                self.store.event("minimize-abandoned", id=m["fid"], worker_s=round(spent, 1))
            except OSError:
                pass
        try:
            self._reap_minimisers([])
        except OSError:
            pass
