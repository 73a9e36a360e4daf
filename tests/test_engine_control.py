"""Campaign control as a user meets it: one process per folder, resume as printed, the budget
kept with many workers, stop signals while saving, --max-findings/-x, --symptoms, repro
confirmation in several fresh processes, and the progress display.

Each test drives the CLI (or the campaign) the way a user does and checks the exit code, the
message and the files on disk. The eager backend and the planted backends keep them cheap;
the ones that run a campaign for tens of seconds are marked slow.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fuzzcomp.campaign.loop as campaign_mod
from fuzzcomp.campaign.loop import Campaign
from fuzzcomp.cli.parser import build_parser, main
from fuzzcomp.base.config import RunConfig
from fuzzcomp.findings.store import Store, claim_new_folder

PLANTED = "fuzzcomp.planted:perturb_add"


def events(out) -> list[dict]:
    return list(Store(Path(out)).events())


def summary(out) -> dict:
    return json.loads((Path(out) / "summary.json").read_text())


def _sleeper():
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])


def _fuzzcomp(*args, **kw):
    return [sys.executable, "-m", "fuzzcomp", *args]


# ---- one live process per campaign folder ------------------------------------------------------

def test_a_folder_held_by_a_live_process_is_refused_and_a_stale_lock_taken_over(tmp_path, capsys):
    out = tmp_path / "c"
    out.mkdir()
    holder = _sleeper()
    try:
        (out / ".lock").write_text(f"{holder.pid} {os.uname().nodename} 0\n")
        rc = main(["run", "--out", str(out), "--cases", "1", "--jobs", "1", "--backend", "eager", "--quiet"])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(err) == 1, err
        assert f"in use by another fuzzcomp process (pid {holder.pid})" in err[0]
        assert not (out / "campaign.json").exists()      # nothing touched
    finally:
        holder.kill()
        holder.wait()
    # the holder is dead now: its lock is stale and the next run takes the folder over
    rc = main(["run", "--out", str(out), "--cases", "1", "--jobs", "1", "--backend", "eager", "--quiet"])
    assert rc == 0, capsys.readouterr().err
    assert summary(out)["cases"] == 1
    assert not (out / ".lock").exists()                    # released at the end


def test_resume_of_a_folder_in_use_is_refused(tmp_path, capsys):
    out = tmp_path / "c"
    Store(out).create({"config": RunConfig(out=str(out), cases=2, backend="eager").to_json(), "versions": {}})
    holder = _sleeper()
    try:
        (out / ".lock").write_text(f"{holder.pid} {os.uname().nodename} 0\n")
        rc = main(["run", "--resume", str(out), "--quiet"])
        err = capsys.readouterr().err
        assert rc == 2 and "in use by another fuzzcomp process" in err, err
    finally:
        holder.kill()
        holder.wait()


def test_default_folders_started_in_the_same_second_differ(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(time, "gmtime", lambda *a: time.struct_time((2026, 1, 2, 3, 4, 5, 4, 2, 0)))
    from fuzzcomp.cli.commands import run_config
    args = build_parser().parse_args(["run", "--cases", "1", "--backend", "eager"])
    a, _ = run_config(args)
    b, _ = run_config(args)
    assert a.out == "reports/run-20260102-030405" and b.out == "reports/run-20260102-030405-2"
    assert Path(a.out).is_dir() and Path(b.out).is_dir()
    assert claim_new_folder() == "reports/run-20260102-030405-3"


# ---- resume alone continues with the saved settings and what is left of the budget -------------

def test_resume_alone_takes_the_saved_budget_backend_and_settings(tmp_path):
    from fuzzcomp.cli.commands import run_config
    out = tmp_path / "c"
    started = RunConfig(out=str(out), seconds=600.0, backend=PLANTED, seed=5, jobs=3, minimize=False,
                        symptoms=("numeric",), max_findings=4)
    Store(out).create({"config": started.to_json(), "versions": {},
                       "budget": {"seconds": 600.0, "spent_s": 123.0, "remaining_s": 477.0}})
    cfg, resume = run_config(build_parser().parse_args(["run", "--resume", str(out)]))
    assert resume and cfg.seconds == 477.0
    assert (cfg.backend, cfg.seed, cfg.jobs, cfg.minimize) == (PLANTED, 5, 3, False)
    assert cfg.symptoms == ("numeric",) and cfg.max_findings == 4
    # a flag still wins over what was saved
    cfg, _ = run_config(build_parser().parse_args(["run", "--resume", str(out), "--minutes", "2"]))
    assert cfg.seconds == 120.0


def test_resume_of_a_spent_budget_asks_for_more(tmp_path, capsys):
    out = tmp_path / "c"
    Store(out).create({"config": RunConfig(out=str(out), seconds=60.0, backend="eager").to_json(),
                       "versions": {}, "budget": {"seconds": 60.0, "spent_s": 61.0, "remaining_s": 0.0}})
    rc = main(["run", "--resume", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "budget" in err and "is spent" in err and "--minutes" in err


@pytest.mark.slow
def test_ctrl_c_then_the_printed_resume_command_works_as_printed(tmp_path):
    """Ctrl-C, then the exact command the campaign printed: no "give a budget", the custom
    backend and settings kept; meanwhile a second campaign on the folder is refused."""
    out = tmp_path / "c"
    proc = subprocess.Popen(_fuzzcomp("run", "--minutes", "1", "--jobs", "1", "--backend", PLANTED,
                                      "--seed", "1", "--no-minimize", "--out", str(out)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if (out / "events.jsonl").exists() and sum(e["event"] == "case" for e in events(out)) >= 2:
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.3)
    second = subprocess.run(_fuzzcomp("run", "--resume", str(out), "--quiet"), capture_output=True,
                            text=True, cwd=tmp_path, timeout=60)
    assert second.returncode == 2 and "in use by another fuzzcomp process" in second.stderr
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    printed = re.search(r"continue with: (fuzzcomp run .*)", err).group(1).split()
    assert printed == ["fuzzcomp", "run", "--resume", str(out)]
    budget = json.loads((out / "campaign.json").read_text())["budget"]
    assert 0 < budget["remaining_s"] < 60
    t0 = time.monotonic()
    again = subprocess.run(_fuzzcomp(*printed[1:]), capture_output=True, text=True, cwd=tmp_path,
                           timeout=180)
    assert again.returncode == 1, again.stderr  # 1: findings exist (the planted fault's)
    assert "give a budget" not in again.stderr
    assert time.monotonic() - t0 < budget["remaining_s"] + 40
    s = summary(out)
    assert s["config"]["backend"] == PLANTED and s["findings"] >= 1
    idx = [e["index"] for e in events(out) if e["event"] == "case"]
    assert len(idx) == len(set(idx))                       # nothing run twice


# ---- the budget with several workers, and signals while saving ----------------------------------

@pytest.mark.slow
def test_a_minutes_budget_with_several_workers_returns_on_time(tmp_path):
    out = tmp_path / "c"
    t0 = time.monotonic()
    r = subprocess.run(_fuzzcomp("run", "--minutes", "0.5", "--jobs", "3", "--backend", "eager", "--quiet",
                                 "--out", str(out)), capture_output=True, text=True, cwd=tmp_path, timeout=120)
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    assert took < 30 + 15 + 10, took                      # + the CLI's own import of torch
    stop = [e for e in events(out) if e["event"] == "stop"][-1]
    start = [e for e in events(out) if e["event"] == "start"][0]
    assert stop["t"] - start["t"] < 30 + 15, stop["t"] - start["t"]


def test_sigterm_while_workers_stop_still_writes_the_summary(tmp_path, monkeypatch):
    """Signals that arrive while the campaign stops its workers (timeout's SIGTERM after the
    budget, then a second one) cut the waiting short but never the summary and the reports."""
    real = campaign_mod.stop_all

    def stop_all_under_fire(workers, **kw):
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGTERM)
        real(workers, **kw)

    monkeypatch.setattr(campaign_mod, "stop_all", stop_all_under_fire)
    out = tmp_path / "c"
    s = Campaign(RunConfig(out=str(out), cases=1, jobs=1, backend="eager", minimize=False)).run()
    assert s["cases"] == 1
    assert (out / "summary.md").exists() and (out / "summary.json").exists() and (out / "report.html").exists()
    assert summary(out)["stop_reason"] == "signal SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL or callable(signal.getsignal(signal.SIGTERM))


# ---- --max-findings / -x and --symptoms ---------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["--symptoms", "numeric,bogus"], "unknown symptom class 'bogus'"),
    (["--symptoms", ","], "--symptoms needs at least one of"),
    (["--max-findings", "0"], "must be positive"),
    (["--max-findings", "two"], "not a whole number"),
])
def test_bad_max_findings_and_symptoms_give_one_line(argv, words, tmp_path, capsys):
    rc = main(["run", "--cases", "1", "--backend", "eager", "--out", str(tmp_path / "c"), *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and words in err[0], err


def test_exitfirst_stops_at_the_first_finding(tmp_path, capsys):
    out = tmp_path / "c"
    rc = main(["run", "-x", "--jobs", "1", "--seed", "1", "--backend", PLANTED, "--no-minimize",
               "--quiet", "--out", str(out)])        # -x alone is a budget
    assert rc == 1, capsys.readouterr().err             # 1: the campaign has a finding
    s = summary(out)
    assert s["findings"] == 1 and s["stop_reason"] == "--max-findings 1 reached"
    assert s["cases"] < 12


def test_symptoms_keep_only_the_listed_classes(tmp_path, capsys):
    out = tmp_path / "c"
    rc = main(["run", "--cases", "8", "--jobs", "1", "--seed", "1", "--backend", PLANTED, "--no-minimize",
               "--symptoms", "hang,segfault", "--quiet", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    s = summary(out)
    assert s["findings"] == 0 and s["cases"] == 8   # the planted fault shows in some of these cases
    filtered = [e for e in events(out) if e["event"] == "filtered"]
    assert filtered and all(set(e["symptoms"]).isdisjoint({"hang", "segfault"}) for e in filtered)


# ---- autotuning gets larger compile timeouts ------------------------------------------------------

@pytest.mark.parametrize("mode, compile_s, case_s", [
    (None, 150.0, 300.0), ("reduce-overhead", 150.0, 300.0),
    ("max-autotune", 600.0, 900.0), ("max-autotune-no-cudagraphs", 600.0, 900.0)])
def test_autotune_modes_get_larger_compile_timeouts(tmp_path, mode, compile_s, case_s):
    from fuzzcomp.cli.commands import run_config
    argv = ["run", "--cases", "1", "--backend", "eager", "--out", str(tmp_path / "c")]
    cfg, _ = run_config(build_parser().parse_args(argv + (["--mode", mode] if mode else [])))
    assert (cfg.compile_timeout_s, cfg.case_timeout_s) == (compile_s, case_s)
    cfg, _ = run_config(build_parser().parse_args(argv + ["--compile-timeout", "42"]
                                                  + (["--mode", mode] if mode else [])))
    assert cfg.compile_timeout_s == 42.0                  # the flag still wins


def test_generation_keeps_one_minimisation_in_reserve_before_the_end():
    """A bucket found in the budget's last seconds still gets its repro: generation stops one
    measured minimisation before the end even when no bucket waits, and earlier when buckets
    wait (a quarter of the budget at most, either way)."""
    from types import SimpleNamespace
    c = Campaign.__new__(Campaign)
    c.cfg = SimpleNamespace(minimize=True, seconds=1800.0, minimize_budget_s=120.0)
    c.queue, c._slug_of, c._has_repro, c._minimisers, c._known = [], {}, set(), [], {}
    c._minimise_spent, c._minimise_count, c.workers = 130.0, 2, [object(), object()]
    c._check_spent, c._check_count = 0.0, 0
    now = time.monotonic()
    assert not c._generation_over(now + 66.0)      # 65 s per minimisation measured: go on
    assert c._generation_over(now + 64.0)          # inside the standing reserve: stop
    c.queue = [(0, 0, 0, f"f{i}") for i in range(3)]
    c._slug_of = {f"f{i}": f"b{i}" for i in range(3)}
    assert c._generation_over(now + 129.0)         # 3 buckets wait on 2 workers: 2 rounds
    assert not c._generation_over(now + 131.0)
    # known bugs' label checks waiting (3 buckets, 2 workers: 2 rounds of the 20 s estimate, then
    # of their measured mean) keep their time too: CPU 1516 ended with a rule's claim unchecked
    c._known = {f"k{i}": object() for i in range(3)}
    c.queue += [(1, 0, 3 + i, f"k{i}") for i in range(3)]
    c._slug_of.update({f"k{i}": f"kb{i}" for i in range(3)})
    assert c._generation_over(now + 169.0) and not c._generation_over(now + 171.0)  # 130 + 2 x 20
    c._check_spent, c._check_count = 20.0, 4                                      # 5 s a check measured
    assert c._generation_over(now + 139.0) and not c._generation_over(now + 141.0)
    c.queue = [q for q in c.queue if q[0] == 1]    # only checks wait: the larger of them and one minimisation
    assert c._generation_over(now + 64.0) and not c._generation_over(now + 66.0)
    c._check_spent, c._check_count = 0.0, 0
    c._known.update({f"k{i}": object() for i in range(3, 9)})
    c.queue += [(1, 0, 3 + i, f"k{i}") for i in range(3, 9)]
    c._slug_of.update({f"k{i}": f"kb{i}" for i in range(3, 9)})
    assert c._generation_over(now + 99.0) and not c._generation_over(now + 101.0)  # 9 checks: 5 rounds of 20 s > 65 s
    c._known, c.queue = {}, []
    c.cfg.seconds = 60.0                           # a short budget: the reserve is capped
    c._minimise_count = 0
    assert not c._generation_over(now + 16.0) and c._generation_over(now + 14.0)  # 15 s: a quarter
    c.cfg.minimize = False
    assert not c._generation_over(now + 1.0)
