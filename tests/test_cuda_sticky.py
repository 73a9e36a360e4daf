"""A sticky CUDA error (device-side assert, illegal memory access) poisons its worker's process:
the worker is restarted and a check job's answer becomes a death, so the campaign re-runs the case
eager-only on the fresh worker and, when eager alone completes, records a runtime crash. No GPU:
the worker's answers are faked."""
from __future__ import annotations

from types import SimpleNamespace

from fuzzcomp.base.messages import CHECK, DIED, DONE, EAGER_ONLY, HARNESS_ERROR, Job, JobResult
from fuzzcomp.oracles import Verdict
from fuzzcomp.workers.isolation_verdicts import (as_death, blames_compiler, crash_verdict, needs_eager_rerun,
                                                 sticky_cuda)
from fuzzcomp.workers.worker import Worker

ASSERT = "AcceleratorError: CUDA error: device-side assert triggered\nCompile with TORCH_USE_CUDA_DSA"


class _Conn:
    def __init__(self, msgs):
        self.msgs = list(msgs)

    def poll(self):
        return bool(self.msgs)

    def recv(self):
        return self.msgs.pop(0)


def _worker(answer):
    w = Worker.__new__(Worker)
    w.job = Job(7, CHECK, None, 60.0)
    w.conn, w.jobs_done, w.phase = _Conn([answer]), 0, "run"
    w.settings = SimpleNamespace(recycle_every=1000)
    w.restarted = 0
    w.restart = lambda: setattr(w, "restarted", w.restarted + 1)
    return w


def test_sticky_harness_error_restarts_and_reads_as_a_death_then_a_runtime_crash():
    w = _worker(JobResult(7, HARNESS_ERROR, message=ASSERT))
    first = w.collect()
    assert w.restarted == 1 and first.status == DIED and needs_eager_rerun(first)
    eager = JobResult(8, DONE, valid=True)          # eager alone, on the fresh worker
    assert blames_compiler(first, eager)
    v = crash_verdict(first.status, first.message)
    assert v.symptom == "runtime-crash" and "device-side assert" in v.detail
    assert not blames_compiler(first, JobResult(8, DONE, valid=False))  # eager trips it too: nothing


def test_worker_probe_flags_a_poisoned_context_after_a_done_job():
    w = _worker(JobResult(7, DONE, valid=False, stats={"cuda_poisoned": "AcceleratorError: CUDA error: x"}))
    r = w.collect()
    assert w.restarted == 1 and r.status == DIED


def test_findings_already_judged_are_kept_and_eager_jobs_stay_as_they_are():
    found = JobResult(7, DONE, valid=True, verdicts=[Verdict("runtime-crash", "unknown", "exception", ASSERT)])
    w = _worker(found)
    assert w.collect() is found and w.restarted == 1
    eager = JobResult(8, DONE, valid=False, stats={"cuda_poisoned": ASSERT})
    assert as_death(eager, EAGER_ONLY) is eager


def test_ordinary_errors_are_no_sticky_cuda_error():
    plain = JobResult(7, HARNESS_ERROR, message="RuntimeError: shape mismatch")
    w = _worker(plain)
    assert w.collect() is plain and w.restarted == 0
    assert not sticky_cuda(JobResult(1, DONE, valid=True))
    assert crash_verdict(DIED, "worker died with exit code -11").symptom == "segfault"
