"""Fault tests for the campaign engine: each fault ends with a clear message and nothing lost.

Faults: kill -9 of a worker in mid-case, a case that aborts (segfault), a case
that hangs, running out of memory under the worker cap, SIGTERM to the
campaign process, a corrupt state file on resume (campaign.json, a torn
events.jsonl line, a finding lost between its file and its case event), and a
failed disk write. The planted backends and ``eager`` keep these fast.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from fuzzcomp.campaign.loop import Campaign, CampaignError
from fuzzcomp.cli.parser import main
from fuzzcomp.base.config import RunConfig
from fuzzcomp.findings.store import Store

REPO = Path(__file__).resolve().parent.parent


def oom_backend(gm, example_inputs):
    """Test-only backend: its compiled code asks for 64 GiB, which the worker's memory cap refuses."""
    def run(*args):
        torch.empty(64 * 1024 ** 3, dtype=torch.uint8)
        return gm(*args)
    return run


def events(out) -> list[dict]:
    return list(Store(Path(out)).events())


def case_indices(out) -> list[int]:
    return [e["index"] for e in events(out) if e["event"] == "case"]


def cfg(out, **kw) -> RunConfig:
    base = dict(out=str(out), cases=2, jobs=1, backend="eager", minimize=False, case_timeout_s=60.0)
    base.update(kw)
    return RunConfig(**base)


def test_aborting_compile_is_a_segfault_finding(tmp_path):
    s = Campaign(cfg(tmp_path / "c", backend="fuzzcomp.planted:abort", cases=1)).run()
    assert s["cases"] == 1 and s["findings"] == 1
    (b,) = s["buckets"].values()
    assert b["symptom"] == "segfault"
    ev = events(tmp_path / "c")
    assert any(e["event"] == "worker-restart" and e["reason"] == "died" for e in ev)
    f = Store(tmp_path / "c").finding(b["findings"][0])
    assert "exit code" in f["verdicts"][0]["detail"]
    assert (tmp_path / "c" / "report.html").exists()


@pytest.mark.slow
def test_hanging_compile_is_a_hang_finding(tmp_path):
    t0 = time.monotonic()
    s = Campaign(cfg(tmp_path / "c", backend="fuzzcomp.planted:hang", cases=1, case_timeout_s=2.0)).run()
    assert s["findings"] == 1
    (b,) = s["buckets"].values()
    assert b["symptom"] == "hang"
    assert time.monotonic() - t0 < 60


@pytest.mark.slow
def test_kill_9_of_a_worker_mid_case(tmp_path):
    """The worker is SIGKILLed while it compiles: the case is still recorded, the worker restarted."""
    c = Campaign(cfg(tmp_path / "c", backend="fuzzcomp.planted:hang", cases=1, case_timeout_s=60.0))
    killed = []

    def killer():
        deadline = time.monotonic() + 50
        while time.monotonic() < deadline and not killed:
            for w in list(c.workers):
                if w.busy and w.proc is not None and time.monotonic() - w.started_at > 1.0:
                    os.kill(w.proc.pid, signal.SIGKILL)
                    killed.append(w.proc.pid)
                    return
            time.sleep(0.1)

    threading.Thread(target=killer, daemon=True).start()
    t0 = time.monotonic()
    s = c.run()
    assert killed, "the worker never became busy"
    assert time.monotonic() - t0 < 55          # the kill, not the 60 s timeout, ended the case
    assert s["cases"] == 1
    restart = [e for e in events(tmp_path / "c") if e["event"] == "worker-restart"]
    assert restart and restart[0]["reason"] == "died" and "-9" in restart[0]["message"]
    assert s["findings"] == 1                   # eager alone is fine, so the death is a finding


@pytest.mark.slow
def test_out_of_memory_is_an_event_not_a_finding(tmp_path):
    s = Campaign(cfg(tmp_path / "c", backend="test_campaign_faults:oom_backend", cases=2,
                     memory_mb=2048)).run()
    ooms = [e for e in events(tmp_path / "c") if e["event"] == "oom"]
    # a case whose program compiles no graph never runs the allocating code: it is a clean case
    assert s["cases"] == 2 and s["findings"] == 0 and s["oom"] == len(ooms) >= 1, s
    assert "allocate" in ooms[0]["detail"]


@pytest.mark.slow
def test_failed_event_write_stops_with_a_clear_message(tmp_path, monkeypatch):
    out = tmp_path / "c"
    real = Store.event
    calls = {"n": 0}

    written = []

    def flaky(self, kind, **fields):
        calls["n"] += 1
        if calls["n"] > 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(kind)
        return real(self, kind, **fields)

    monkeypatch.setattr(Store, "event", flaky)
    with pytest.raises(CampaignError) as err:
        Campaign(cfg(out, cases=20)).run()
    msg = str(err.value)
    assert "No space left on device" in msg and "--resume" in msg and "\n" not in msg
    monkeypatch.setattr(Store, "event", real)
    kept = case_indices(out)
    # every case event written before the failure is kept, once
    assert len(kept) == written.count("case") >= 1 and kept == sorted(set(kept)), (kept, written)


@pytest.mark.slow
def test_failed_finding_write_names_the_seed(tmp_path, monkeypatch):
    def refuse(self, *a, **k):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(Store, "record_finding", refuse)
    with pytest.raises(CampaignError) as err:
        Campaign(cfg(tmp_path / "c", backend="fuzzcomp.planted:abort", cases=1)).run()
    assert "seed 0" in str(err.value) and "fuzzcomp replay 0" in str(err.value)
    assert "Read-only file system" in str(err.value)


@pytest.mark.slow
def test_cli_reports_a_disk_failure_in_one_line(tmp_path, monkeypatch, capsys):
    def refuse(self, kind, **fields):
        if kind == "case":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, kind, **fields)

    real = Store.event
    monkeypatch.setattr(Store, "event", refuse)
    rc = main(["run", "--cases", "2", "--jobs", "1", "--backend", "eager", "--out", str(tmp_path / "c"),
               "--quiet", "--no-minimize"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 3 and len(err) == 1 and err[0].startswith("fuzzcomp: error: campaign stopped")  # harness


# ---- resume and corrupt state -------------------------------------------------------------

@pytest.fixture(scope="module")
def small_campaign(tmp_path_factory):
    """A folder as ``Campaign(cfg(out, cases=4)).run()`` leaves it, written without workers."""
    from fuzzcomp.campaign.loop import case_features, case_seed
    from fuzzcomp.generators import generate
    from fuzzcomp.generators.ir import op_names
    out = tmp_path_factory.mktemp("camp") / "c"
    store = Store(out)
    store.create({"config": cfg(out, cases=4).to_json(), "versions": {}})
    store.event("start")
    for i in range(4):
        case = generate(case_seed(0, i))
        store.event("case", index=i, seed=case.seed, valid=True, status="done", timings={},
                    ops=op_names(case.program), features=case_features(case))
    store.event("stop", reason="budget spent")
    return out


def test_resume_after_a_torn_event_line(small_campaign, tmp_path):
    out = tmp_path / "c"
    shutil.copytree(small_campaign, out)
    with open(out / "events.jsonl", "a") as f:
        f.write('{"event": "case", "index": 99, "se')   # kill -9 in mid-write
    s = Campaign(cfg(out, cases=6), resume=True).run()
    assert sorted(case_indices(out)) == list(range(6))    # nothing lost, nothing twice
    assert s["cases"] == 6
    (resume,) = [e for e in events(out) if e["event"] == "resume"]
    assert resume["torn_lines"] == 1
    assert '"se\n' in (out / "events.jsonl").read_text()  # the fragment is kept on its own line


def test_resume_reruns_dropped_cases_and_recovers_lost_case_events(small_campaign, tmp_path):
    out = tmp_path / "c"
    shutil.copytree(small_campaign, out)
    lines = (out / "events.jsonl").read_text().splitlines(keepends=True)
    kept = [ln for ln in lines if json.loads(ln).get("index") != 1]   # case 1 was in flight at a stop
    (out / "events.jsonl").write_text("".join(kept))
    c = Campaign(cfg(out, cases=6), resume=True)
    c._open_store()
    assert c.pending == [1] and c.next_index == 4


def test_resume_refuses_a_corrupt_campaign_json(small_campaign, tmp_path, capsys):
    out = tmp_path / "c"
    shutil.copytree(small_campaign, out)
    (out / "campaign.json").write_text('{"config": {"seed": 0, "back')
    rc = main(["run", "--resume", str(out), "--cases", "6", "--jobs", "1", "--backend", "eager", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "campaign.json is corrupt" in err[0]
    assert len(list((out / "findings").iterdir())) == len(list((small_campaign / "findings").iterdir()))


def test_resume_refuses_other_settings(small_campaign, capsys):
    rc = main(["run", "--resume", str(small_campaign), "--cases", "6", "--jobs", "1",
               "--backend", "aot_eager", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "backend" in err and "pass the same value" in err


def test_new_campaign_refuses_an_existing_folder(small_campaign, capsys):
    rc = main(["run", "--out", str(small_campaign), "--cases", "1", "--backend", "eager", "--quiet"])
    assert rc == 2 and "--resume" in capsys.readouterr().err


def test_resume_recovers_a_finding_whose_case_event_was_lost(small_campaign, tmp_path):
    """The campaign died between writing a finding and logging its case: the finding counts, once."""
    from fuzzcomp.generators import generate
    from fuzzcomp.workers.isolation_verdicts import crash_verdict
    from fuzzcomp.findings.triage import bucket_of
    out = tmp_path / "c"
    shutil.copytree(small_campaign, out)
    v = crash_verdict("died", "worker died with exit code -6")
    Store(out).record_finding(generate(4), [v], bucket_of(v), origin="case 4")
    c = Campaign(cfg(out, cases=6), resume=True)
    c._open_store()
    assert c.done == {0, 1, 2, 3, 4} and c.counts["findings"] == 1 and c.pending == []
    assert c.next_index == 5 and [q[-1] for q in c.queue]   # queued for minimisation
    recovered = [e for e in events(out) if e["event"] == "case" and e["index"] == 4]
    assert recovered and recovered[0]["status"] == "recovered"


# ---- SIGTERM to the campaign process ------------------------------------------------------

def _wait_for_cases(out: Path, n: int, proc, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"campaign exited early: {proc.communicate()}")
        if (out / "events.jsonl").exists() and len(case_indices(out)) >= n:
            return
        time.sleep(0.3)
    raise AssertionError(f"fewer than {n} cases after {timeout} s")


@pytest.mark.slow
def test_sigterm_saves_reports_and_resumes_without_duplicates(tmp_path):
    out = tmp_path / "c"
    cmd = [sys.executable, "-m", "fuzzcomp", "run", "--minutes", "5", "--jobs", "1",
           "--backend", "eager", "--quiet", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    _wait_for_cases(out, 3, proc, timeout=90)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert time.monotonic() - t0 < 30
    assert "Traceback" not in stderr and "--resume" in stderr
    assert (out / "summary.md").exists() and (out / "report.html").exists()
    stop = [e for e in events(out) if e["event"] == "stop"]
    assert stop and stop[-1]["reason"] == "signal SIGTERM"
    done = case_indices(out)
    target = len(done) + 2
    rc = subprocess.run([sys.executable, "-m", "fuzzcomp", "run", "--resume", str(out), "--cases",
                         str(target), "--jobs", "1", "--backend", "eager", "--quiet"],
                        capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert rc.returncode == 0, rc.stderr
    assert sorted(case_indices(out)) == list(range(target))


# ---- time budget, recycling, cache hygiene ----------------------------------------------------

@pytest.mark.slow
def test_time_budget_is_kept_even_with_a_hung_case(tmp_path):
    """A case that would hang for 10 minutes is dropped 30 s after the deadline, and logged."""
    t0 = time.monotonic()
    s = Campaign(cfg(tmp_path / "c", backend="fuzzcomp.planted:hang", cases=None, seconds=10.0,
                     case_timeout_s=600.0)).run()
    assert time.monotonic() - t0 < 10 + 60
    assert s["dropped"] == 1 and s["stop_reason"] == "budget spent"
    (dropped,) = [e for e in events(tmp_path / "c") if e["event"] == "dropped"]
    assert dropped["index"] == 0 and dropped["reason"] == "time budget spent"


@pytest.mark.slow
def test_workers_are_recycled_every_k_cases(tmp_path):
    c = Campaign(cfg(tmp_path / "c", cases=5, recycle_every=2))
    s = c.run()
    assert s["cases"] == 5 and c.workers[0].restarts == 2


def test_worker_gets_a_private_cache_dir_that_is_removed(tmp_path):
    from fuzzcomp.workers.worker import CACHE_ENV, Worker, WorkerSettings, _setup_cache
    w = Worker(0, WorkerSettings())
    w.start()
    try:
        first = w.cache_dir
        assert first and Path(first).is_dir()
        w.restart()
        assert w.cache_dir != first and not Path(first).exists()
    finally:
        second = w.cache_dir
        w.stop()
    assert w.cache_dir is None and not Path(second).exists()
    env = dict(os.environ)
    try:
        os.environ.update({k: "1" for k in CACHE_ENV})  # a user's forced caches must not reach workers
        _setup_cache(str(tmp_path))
        assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path)
        assert not any(k in os.environ for k in CACHE_ENV)
    finally:
        os.environ.clear()
        os.environ.update(env)


@pytest.mark.slow  # each waits out its timeout; test_oracles_isolation's hang case stays in the default suite
@pytest.mark.parametrize("backend,limits,says", [
    ("fuzzcomp.planted:hang", dict(compile_timeout_s=3.0), "a compilation took longer than 3 s"),
    ("fuzzcomp.planted:hang_at_run", dict(run_timeout_s=3.0), "a compiled run took longer than 3 s"),
])
def test_compile_and_run_have_their_own_timeouts(tmp_path, backend, limits, says):
    """A stuck compilation or a stuck compiled run is cut by its own limit, long before the
    case's (600 s here), and the finding says which phase hung."""
    t0 = time.monotonic()
    s = Campaign(cfg(tmp_path / "c", backend=backend, cases=1, case_timeout_s=600.0, **limits)).run()
    assert time.monotonic() - t0 < 120
    assert s["findings"] == 1
    (b,) = s["buckets"].values()
    assert b["symptom"] == "hang"
    f = Store(tmp_path / "c").finding(b["findings"][0])
    assert says in f["verdicts"][0]["detail"]


@pytest.mark.slow
def test_eager_run_timeout_is_no_finding(tmp_path):
    """A run slower than the run limit on a correct backend is the program's cost, not the
    compiler's: whichever run the parent catches over the limit (eager, compiled, or the eager-only
    re-run), the case is never a hang finding."""
    s = Campaign(cfg(tmp_path / "c", backend="eager", cases=3, run_timeout_s=1e-6)).run()
    assert s["findings"] == 0 and s["cases"] == 3


@pytest.mark.slow  # a 45 s campaign
def test_minimisation_is_cut_at_the_campaign_deadline(tmp_path):
    """A minimisation that would outlast the budget (a 600 s reduction budget, a 45 s campaign)
    is cancelled at the deadline: the campaign ends within its grace, the repro is still written,
    and status.json says it was not checked in a fresh process."""
    out = tmp_path / "c"
    c = RunConfig(out=str(out), seconds=45.0, jobs=1, backend="fuzzcomp.planted:hang_at_run",
                  minimize=True, minimize_budget_s=600.0, minimize_share=0.9, case_timeout_s=600.0,
                  run_timeout_s=4.0, seed=3)
    t0 = time.monotonic()
    s = Campaign(c).run()
    took = time.monotonic() - t0
    assert took < 45 + 30 + 15, took
    ev = events(out)
    assert any(e["event"] == "minimize-start" for e in ev)
    assert any(e["event"] == "minimize-cancelled" for e in ev), [e["event"] for e in ev]
    reaped = [e for e in ev if e["event"] in ("minimized", "minimize-abandoned")]
    assert reaped and all("worker_s" in e for e in reaped)
    assert s["phase_s"].get("minimise", 0) > 0
