"""A repro counts only when it fails in every one of several fresh processes; every
minimisation (in the campaign or with `fuzzcomp minimize` later) shows in the summaries;
an interruption never leaves a repro.py without its report.md and status.json; the live
progress never shows a blank screen, a stale count, a wrong phase or a cut word."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import fuzzcomp.campaign.pipeline as pipeline_mod
from fuzzcomp.campaign.loop import Campaign
from fuzzcomp.cli.parser import main
from fuzzcomp.base.config import RunConfig
from fuzzcomp.generators import generate
from fuzzcomp.workers.isolation_verdicts import crash_verdict
from fuzzcomp.campaign.pipeline import confirm_repro, finish_finding
from fuzzcomp.cli.progress import Progress, shorten
from fuzzcomp.report.summary import render_text, summarise, write_summary
from fuzzcomp.findings.store import Store
from fuzzcomp.findings.triage import bucket_of

ALWAYS = "import sys\nprint('BUG: wrong value')\nsys.exit(1)\n"
NEVER = "print('ok')\n"
BROKEN = "raise SystemExit(1)\n"            # exits 1 without a BUG line: not a reproduction
FLAKY = """import sys, pathlib
p = pathlib.Path(__file__).with_suffix('.n')
n = int(p.read_text()) + 1 if p.exists() else 1
p.write_text(str(n))
if n % 2:
    print('BUG: only sometimes')
    sys.exit(1)
print('ok')
"""


@pytest.mark.parametrize("text, confirmed, flaky, runs", [
    (ALWAYS, True, False, "3/3"), (FLAKY, False, True, "2/3"), (NEVER, False, False, "0/3"),
    (BROKEN, False, False, "0/3")])
def test_a_repro_is_confirmed_only_when_every_fresh_process_fails(tmp_path, text, confirmed, flaky, runs):
    repro = tmp_path / "repro.py"
    repro.write_text(text)
    info = confirm_repro(repro, 3, timeout_s=60, parallel=1)  # FLAKY counts its runs in a file
    assert info["confirmed"] is confirmed and bool(info.get("flaky")) is flaky and info["confirm_runs"] == runs


@pytest.mark.parametrize("text, confirmed, runs", [(ALWAYS, True, "3/3"), (NEVER, False, "0/3")])
def test_the_fresh_processes_of_a_check_run_side_by_side_where_there_are_cores(tmp_path, monkeypatch, text,
                                                                              confirmed, runs):
    """A CUDA crash's 3 fresh runs took 41 s each, one after another, and a bucket found 89 s
    before the end went unchecked; with the cores for it they run at once, with the same verdict,
    and only the first keeps its log."""
    import threading
    import time as time_mod
    live, most, logs = [0], [0], []
    lock = threading.Lock()
    real = pipeline_mod.run_repro

    def counting(path, timeout_s=600.0, should_stop=None, log=True):
        with lock:
            live[0] += 1
            most[0] = max(most[0], live[0])
        time_mod.sleep(0.3)
        logs.append(log)
        try:
            return real(path, timeout_s, should_stop, log)
        finally:
            with lock:
                live[0] -= 1
    monkeypatch.setattr(pipeline_mod, "run_repro", counting)
    repro = tmp_path / "repro.py"
    repro.write_text(text)
    info = confirm_repro(repro, 3, timeout_s=60, parallel=3)
    assert info["confirmed"] is confirmed and info["confirm_runs"] == runs and most[0] == 3
    assert sorted(logs) == [False, False, True] and (tmp_path / "repro.log").exists()
    assert pipeline_mod.confirm_width(3, cpus=2) == 1 and pipeline_mod.confirm_width(3, cpus=16) == 3


OTHER_ERROR = "import sys\nprint('BUG: call 0: compiled call raised ConstraintViolationError: Constraints violated')\nsys.exit(1)\n"
SAME_ERROR = "import sys\nprint('BUG: call 2: compiled call raised InductorError: AssertionError: ')\nsys.exit(1)\n"


@pytest.mark.parametrize("text, confirmed", [(SAME_ERROR, True), (OTHER_ERROR, False)])
def test_a_crash_repro_confirms_its_bucket_only_with_the_buckets_exception(tmp_path, text, confirmed):
    """H200 seed 1309: a crash bucket's short repro raised ConstraintViolationError (a
    mark_dynamic the minimised program specialises, which the judge ignores by design) on its
    first call and was counted as reproducing the InductorError bucket."""
    from fuzzcomp.findings.triage import BucketKey
    key = BucketKey("compile-crash", "inductor", "InductorError: AssertionError:")
    assert pipeline_mod.crash_type(key) == "InductorError"
    assert pipeline_mod.crash_type(BucketKey("numeric", "inductor", "culprit op: torch.add")) is None
    repro = tmp_path / "repro.py"
    repro.write_text(text)
    info = confirm_repro(repro, 2, timeout_s=60, parallel=1, expect=pipeline_mod.crash_type(key))
    assert info["confirmed"] is confirmed and not info.get("flaky")
    assert ("other_error" in info) is (not confirmed)


def test_a_check_cut_by_the_campaign_end_is_unknown_not_failed(tmp_path):
    repro = tmp_path / "repro.py"
    repro.write_text(ALWAYS)
    calls = iter([False, False, True, True, True, True])
    info = confirm_repro(repro, 3, timeout_s=60, should_stop=lambda: next(calls, True), parallel=1)
    assert info["confirmed"] is None


def _store_with_finding(root: Path, status: str = "died", index: int = 1) -> tuple[Store, str]:
    store = Store(root)
    if not (root / "campaign.json").exists():
        store.create({"config": RunConfig(out=str(root), cases=4, backend="eager").to_json(), "versions": {}})
        store.event("start")
    v = crash_verdict(status, "worker died with exit code -6")
    fid = store.record_finding(generate(index), [v], bucket_of(v), origin=f"case {index}")
    return store, fid


def test_ctrl_c_during_the_check_leaves_the_repro_with_its_report_and_status(tmp_path, monkeypatch):
    """Interrupted at the fresh-process check: repro.py, report.md and status.json are all there,
    the status says the check is pending, the summary counts the bucket as not minimised, and
    resume queues the finding again."""
    store, fid = _store_with_finding(tmp_path / "c")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline_mod, "run_repro", interrupted)
    with pytest.raises(KeyboardInterrupt):
        finish_finding(store, fid, None, minimize=False, budget_s=1, timeout_s=10)
    for name in ("repro.py", "report.md", "status.json"):
        assert store.path(fid, name).exists(), name
    assert json.loads(store.path(fid, "status.json").read_text())["pending"]
    (b,) = summarise(store)["buckets"].values()
    assert b["status"] == "no-repro" and b["unminimised"] == [fid]
    c = Campaign(RunConfig(out=str(store.root), cases=4, backend="eager"), resume=True)
    c._open_store()
    assert [q[-1] for q in c.queue] == [fid]


def test_flaky_and_unconfirmed_buckets_are_flagged_and_kept_out_of_the_headline(tmp_path):
    store, a = _store_with_finding(tmp_path / "c", "died", 1)
    _, b = _store_with_finding(tmp_path / "c", "timeout", 2)
    for fid, st in ((a, {"confirmed": True, "confirm_runs": "3/3"}),
                    (b, {"confirmed": False, "flaky": True, "confirm_runs": "1/3"})):
        store.path(fid, "repro.py").write_text("pass\n")
        store.path(fid, "status.json").write_text(json.dumps({"id": fid, "repro_says": "BUG: x", **st}))
    s = write_summary(store)
    by_id = {bk["findings"][0]: bk for bk in s["buckets"].values()}
    assert by_id[a]["status"] == "confirmed" and by_id[b]["status"] == "flaky"
    assert s["confirmed_buckets"] == 1 and len(s["unconfirmed_buckets"]) == 1
    text = render_text(s)
    assert "bugs: 1 buckets with a confirmed repro" in text and "FLAKY" in text
    md = (store.root / "summary.md").read_text()
    assert "| flaky |" in md and "| confirmed |" in md
    main(["report", str(store.root)])
    assert "FLAKY: fails only in some fresh processes" in (store.root / "report.html").read_text()


@pytest.mark.slow
def test_minimize_afterwards_feeds_back_into_the_summaries(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["run", "-x", "--jobs", "1", "--seed", "1", "--backend", "fuzzcomp.planted:perturb_add",
                 "--no-minimize", "--quiet", "--out", str(out)]) == 1  # findings exist
    s = json.loads((out / "summary.json").read_text())
    (bucket,) = s["buckets"].values()
    assert bucket["status"] == "no-repro" and s["confirmed_buckets"] == 0
    capsys.readouterr()
    assert main(["minimize", str(out / "findings" / bucket["findings"][0]), "--budget", "20"]) == 0
    said = capsys.readouterr().out
    assert "failed in 3/3 fresh processes" in said and "(rebuilt)" in said
    s = json.loads((out / "summary.json").read_text())
    (bucket,) = s["buckets"].values()
    assert bucket["status"] == "confirmed" and s["confirmed_buckets"] == 1
    assert "| confirmed |" in (out / "summary.md").read_text()
    assert "no minimised repro yet" not in (out / "report.html").read_text()


# ---- progress -----------------------------------------------------------------------------------

class _Key:
    symptom, stage, signature = "numeric", "inductor", "output values " + "word " * 40

    def slug(self):
        return "numeric-inductor-12345678"


def test_progress_off_a_terminal(capsys):
    p = Progress(60.0, None)
    p("starting", jobs=16)
    err = capsys.readouterr().err
    assert "starting 16 workers..." in err and "[starting]" in err      # at once, nothing blank
    p._last_plain = 0
    p("finding", key=_Key(), fid="f1", new=True, counts={"cases": 0, "valid": 0, "findings": 1})
    err = capsys.readouterr().err
    assert "findings 1 in 1 buckets" in err and "findings 0 in 1" not in err
    long_line = next(ln for ln in err.splitlines() if ln.startswith("new bucket"))
    assert len(long_line) > 200 and long_line.endswith("(finding f1)  [NEW]")   # not wrapped at 80 columns
    p._last_plain = 0
    p("phase", phase="minimising", minimising=["f1"])
    p("case", counts={"cases": 1, "valid": 1, "findings": 1})
    err = capsys.readouterr().err
    assert "[minimising]" in err and "[generating]" not in err and "minimising f1" in err
    p("minimized", info={"id": "f1", "probes": 3, "minimize_s": 2.0, "repro_exit": 1, "confirm_runs": "3/3",
                         "repro_says": "BUG: " + "mismatch " * 40})
    line = capsys.readouterr().err.strip()
    said = line.split("  ", 1)[1]
    assert said.endswith("…") and said[:-1].split()[-1] == "mismatch"    # cut at a word, marked


def test_shorten_keeps_short_text_and_cuts_at_words():
    assert shorten("a  b\nc", 10) == "a b c"
    assert shorten("alpha beta gamma delta", 12) == "alpha beta…"


@pytest.mark.slow
def test_every_bucket_has_a_confirmed_repro_at_the_end_of_a_timed_campaign(tmp_path):
    """A --minutes campaign (one worker: the hardest case) ends with every bucket minimised and
    confirmed in 3 fresh processes, within its budget; the summary's headline counts them.

    The planted fault is a runtime crash: one root cause, one bucket. (A planted 0.1% error in
    every add splits into one bucket per culprit op, since the culprit names the statement that
    first diverges, not the add in its guard expression: a triage weakness of its own, and more
    buckets than one worker can minimise in 2 minutes.)"""
    import time
    out = tmp_path / "c"
    t0 = time.monotonic()
    assert main(["run", "--minutes", "2", "--jobs", "1", "--seed", "1", "--backend",
                 "fuzzcomp.planted:runtime_crash", "--minimize-budget", "20", "--quiet", "--out", str(out)]) == 1
    assert time.monotonic() - t0 < 120 + 15
    s = json.loads((out / "summary.json").read_text())
    assert s["buckets"], "the planted fault was not found"
    assert all(b["status"] == "confirmed" for b in s["buckets"].values()), \
        {k: b["status"] for k, b in s["buckets"].items()}
    assert s["confirmed_buckets"] == len(s["buckets"]) and s["unconfirmed_buckets"] == []


@pytest.mark.parametrize("shows", ["short-full", "long", None])
def test_a_short_repro_that_never_shows_the_bug_gives_way_only_to_one_that_does(tmp_path, monkeypatch, shows):
    """A pruned short repro that says OK in every fresh process gives way to the short file of
    the minimised program as it is, then to the long form, whichever first shows the bug; where
    none does, the readable pruned file stays, the status says what each form printed, and the
    report says it was not reproduced on its own."""
    store, fid = _store_with_finding(tmp_path / "c")
    monkeypatch.setattr(pipeline_mod, "render_repro",
                        lambda case, key, detail, form="short": f"# {form} form\n" + (
                            "INPUTS = []\n" if form == "long" else "def inputs():\n    pass\n"))

    def run(path, timeout_s=600.0, should_stop=None, log=True):
        form = Path(path).read_text().split()[1]
        return (1, f"BUG: {form} says so") if form == shows else (0, "OK: compiled matches eager")
    monkeypatch.setattr(pipeline_mod, "run_repro", run)
    info = finish_finding(store, fid, None, minimize=False, budget_s=1, timeout_s=10)
    text = store.path(fid, "repro.py").read_text()
    status = json.loads(store.path(fid, "status.json").read_text())
    ok = "exit 0: OK: compiled matches eager"
    assert text.startswith(f"# {shows or 'short'} form")
    if shows:
        assert status["short_said"] == ok
    if shows == "short-full":
        assert info["repro_form"] == "short" and info["unpruned"] and info["confirmed"] is True
    elif shows == "long":
        assert info["repro_form"] == "long" and info["confirmed"] is True and status["full_said"] == ok
    else:
        assert text.startswith("# short form") and info["repro_form"] == "short" and info["confirmed"] is False
        assert status["full_said"] == ok and status["long_said"] == ok
    assert ("not reproduced on its own" in store.path(fid, "report.md").read_text()) is (shows is None)
