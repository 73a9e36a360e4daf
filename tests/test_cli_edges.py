"""The CLI at its edges, driven as a user drives it: ``python -m fuzzcomp ...`` in a fresh
interpreter with an empty HOME and XDG_CACHE_HOME. Each test is one bad or unusual input and
what it must give: a clear one-line error with the shared exit code, or the right result, and
nothing lost. The ones that compile are marked slow.
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

from fuzzcomp.findings.store import Store
from fuzzcomp.findings.triage import bucket_of
from fuzzcomp.generators import generate
from fuzzcomp.workers.isolation_verdicts import crash_verdict


def _env(tmp_path: Path) -> dict:
    env = dict(os.environ, HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("PYTHONPATH", None)
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def _run(tmp_path, *args, timeout=300, **kw):
    return subprocess.run([sys.executable, "-m", "fuzzcomp", *map(os.fsdecode, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=kw.pop("cwd", tmp_path), env=_env(tmp_path), **kw)


def _one_line_error(p, code: int) -> str:
    assert p.returncode == code, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert "Traceback" not in p.stderr, p.stderr
    return p.stderr.strip().splitlines()[-1]


def _campaign_with_finding(root: Path) -> tuple[Path, str]:
    root.mkdir(parents=True)
    store = Store(root)
    store.create({"config": {"jobs": 1}, "versions": {}})
    store.event("start", config={})
    v = crash_verdict("died", "worker died with exit code -6")
    fid = store.record_finding(generate(2), [v], bucket_of(v), origin="case 2")
    return root, fid


def _registry(tmp_path) -> Path:
    return tmp_path / "cache" / "fuzzcomp" / "campaigns"


def test_recent_campaigns_survive_a_non_utf8_byte_and_refused_runs_take_no_slot(tmp_path):
    camp, fid = _campaign_with_finding(tmp_path / "camp")
    reg = _registry(tmp_path)
    reg.parent.mkdir(parents=True)
    reg.write_bytes(b"/no/such/caf\xe9\n" + os.fsencode(str(camp.resolve())) + b"\n")
    p = _run(tmp_path, "show", fid, cwd=tmp_path / "home")  # elsewhere: found via the list
    assert p.returncode == 0, p.stderr
    assert f"# finding {fid}" in p.stdout
    before = reg.read_bytes()
    # refused commands: never recorded, never rewrite the list
    for args in (["run", "--cases", "1", "--backend", "no_such_backend", "--out", "refused"],
                 ["run", "--cases", "1", "--out", os.fsdecode(b"caf\xe9")]):
        p = _run(tmp_path, *args)
        line = _one_line_error(p, 2)
        assert "UnicodeEncodeError" not in p.stderr
        if "caf" in args[-1]:
            assert "not UTF-8" in line
    assert reg.read_bytes() == before
    assert not (tmp_path / "refused").exists()


def test_replay_names_a_binary_file_and_promote_a_missing_corpus(tmp_path):
    blob = tmp_path / "blob.bin"
    blob.write_bytes(bytes(range(256)))
    line = _one_line_error(_run(tmp_path, "replay", blob), 2)
    assert "neither a fuzzcomp repro" in line and "no such file" not in line
    camp, fid = _campaign_with_finding(tmp_path / "camp")
    line = _one_line_error(_run(tmp_path, "promote", camp / "findings" / fid, "--corpus", tmp_path / "nope"), 2)
    assert "--corpus" in line and "no such folder" in line


def test_replay_judges_the_file_as_it_stands(tmp_path):
    src = Path(__file__).parent / "data" / "rerender" / "runtime_crash_6229301901-s0.short.py"
    text = src.read_text()
    assert "# fuzzcomp-case:" in text  # a generated repro: it carries its case
    broken = tmp_path / "broken_repro.py"
    broken.write_text("def fn(:\n" + text)
    line = _one_line_error(_run(tmp_path, "replay", broken), 3)
    assert "not valid Python" in line
    edited = tmp_path / "edited_repro.py"
    edited.write_text("print('OK: edited by hand')\nraise SystemExit(0)\n" + text)
    p = _run(tmp_path, "replay", edited)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "passes as it stands" in p.stdout and "discrepanc" not in p.stdout


def test_report_flags_an_emptied_event_log(tmp_path):
    camp, _ = _campaign_with_finding(tmp_path / "camp")
    (camp / "events.jsonl").write_text("")
    line = _one_line_error(_run(tmp_path, "report", camp), 3)
    assert "damaged" in line and "empty event log" in line


def test_settings_that_would_waste_a_campaign_are_refused_before_it_starts(tmp_path):
    line = _one_line_error(_run(tmp_path, "run", "--cases", "2", "--mode", "reduce-overhead",
                                "--backend", "eager", "--out", tmp_path / "m"), 2)
    assert "--mode reduce-overhead" in line and "'eager' ignores it" in line
    t0 = time.monotonic()
    line = _one_line_error(_run(tmp_path, "run", "--cases", "2", "--backend", "builtins:print",
                                "--out", tmp_path / "p"), 2)
    assert "is not a compiler" in line and "returned NoneType" in line and time.monotonic() - t0 < 60
    assert not (tmp_path / "m").exists() and not (tmp_path / "p").exists()
    # without --out the run would have claimed reports/run-*: a refused one leaves none behind
    _one_line_error(_run(tmp_path, "run", "--cases", "2", "--mode", "reduce-overhead", "--backend", "eager"), 2)
    assert not list(tmp_path.glob("reports/run-*"))


def test_help_examples_are_accepted(tmp_path):
    h = _run(tmp_path, "run", "--help").stdout
    assert "unary" not in h and "e.g. pointwise,view" in " ".join(h.split())
    line = _one_line_error(_run(tmp_path, "run", "--cases", "1", "--families", "pointwise,viw",
                                "--out", tmp_path / "o"), 2)
    assert "'viw'" in line and "did you mean view" in line and "'pointwise'" not in line
    toml = tmp_path / "ops.toml"  # the key run --help shows, and the one --ops names
    toml.write_text('cases = 1\nbackend = "eager"\nmode = "reduce-overhead"\n[ops]\nops = ["torch.add"]\n'
                    'only = ["torch.mul"]\nfamilies = ["pointwise"]\n')
    line = _one_line_error(_run(tmp_path, "run", "--config", toml, "--out", tmp_path / "t"), 2)
    assert "--mode reduce-overhead" in line  # the file was read: only the later settings check refuses


def test_a_budget_too_small_for_any_case_is_not_clean(tmp_path):
    p = _run(tmp_path, "run", "--minutes", "0.01", "--backend", "eager", "--out", tmp_path / "z")
    line = _one_line_error(p, 2)
    assert "no case ran" in line and "--minutes" in line


def test_the_live_rate_is_never_negative_on_resume():
    from fuzzcomp.cli.progress import Progress
    p = Progress(None, None, quiet=True)
    p("resume", done=5000, rerun=0, findings=0)
    rate = [w for w in p._line().split() if w.endswith("/min")]
    assert rate == ["0.0/min"], p._line()
    p("case", counts={"cases": 5001, "valid": 1})
    assert not [w for w in p._line().split() if w.endswith("/min") and w.startswith("-")]


@pytest.mark.slow
def test_resume_warns_of_another_version(tmp_path):
    out = tmp_path / "c"
    p = _run(tmp_path, "run", "--cases", "2", "--backend", "eager", "--out", out)
    assert p.returncode == 0, p.stderr[-2000:]
    meta = json.loads((out / "campaign.json").read_text())
    meta["fuzzcomp"] = "0.0.1-old"
    (out / "campaign.json").write_text(json.dumps(meta))
    p = _run(tmp_path, "run", "--resume", out, "--cases", "3")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "made by fuzzcomp 0.0.1-old, this is fuzzcomp" in p.stderr


@pytest.mark.slow
def test_minimize_interrupted_by_sigterm_keeps_its_probes(tmp_path):
    camp, fid = _campaign_with_finding(tmp_path / "camp")
    folder = camp / "findings" / fid
    proc = subprocess.Popen([sys.executable, "-m", "fuzzcomp", "minimize", str(folder)], cwd=tmp_path,
                            env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(8)  # the worker imports torch, then the first probes run
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert "the smallest case so far is saved" in err
    assert (folder / "minimized.json").exists() and (folder / "repro.py").exists()
    assert "probes" in json.loads((folder / "status.json").read_text())


@pytest.mark.slow
def test_resume_with_only_minimisation_left_minimises(tmp_path):
    """Ctrl-C in the minimising phase, then the printed resume command: the queued findings are
    minimised (no ImportError from threads importing Inductor at once), none fails in 0 s."""
    out = tmp_path / "c"
    proc = subprocess.Popen([sys.executable, "-m", "fuzzcomp", "run", "--cases", "10", "--jobs", "2",
                             "--backend", "fuzzcomp.planted:perturb_add", "--minimize-budget", "5",
                             "--out", str(out)], cwd=tmp_path, env=_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        log = (out / "events.jsonl").read_text() if (out / "events.jsonl").exists() else ""
        if log.count('"event": "case"') >= 10 and '"minimize-start"' in log:
            break
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    hint = [ln for ln in err.splitlines() if "continue with: fuzzcomp run --resume" in ln]
    assert hint, err[-2000:]
    findings = sorted((out / "findings").iterdir())
    assert findings
    p = _run(tmp_path, *hint[-1].split("continue with: fuzzcomp ")[1].split())
    assert p.returncode == 1, p.stderr[-3000:]
    assert "ImportError" not in p.stdout + p.stderr
    assert "harness errors 0" in p.stdout
    store = Store(out)
    by_bucket: dict[str, list[str]] = {}
    for fid in store.finding_ids():
        by_bucket.setdefault(store.finding(fid)["bucket_obj"].slug(), []).append(fid)
    for slug, fids in by_bucket.items():
        # at most max_minimize_per_bucket (2) findings of one bucket are minimised; the rest are
        # evidence of how often it came up, and carry no status
        done = [fid for fid in fids if store.path(fid, "status.json").exists()]
        assert len(done) == min(2, len(fids)), (slug, fids, done)
        for fid in done:
            status = json.loads(store.path(fid, "status.json").read_text())
            assert "error" not in status and status.get("minimize_s") is not None, (fid, status)


@pytest.mark.slow
def test_a_timeout_that_makes_every_case_hang_stops_the_campaign(tmp_path):
    p = _run(tmp_path, "run", "--cases", "12", "--jobs", "2", "--compile-timeout", "1", "--no-minimize",
             "--out", tmp_path / "h", timeout=600)
    line = _one_line_error(p, 2)
    assert re.search(r"\b\d+ of the first \d+ cases hung", line) and "--compile-timeout" in line, line


def test_the_hang_guard_stops_on_nearly_all_hangs_early_and_never_later_or_on_resume():
    """Its finding events may lag the case events: 4 hangs at the 5th case stop the campaign; 2 do
    not; past the first 10 cases, or on a resume, it never stops one."""
    from types import SimpleNamespace
    from fuzzcomp.cli.commands import _hang_guard, _SettingWastesCampaign
    cfg = SimpleNamespace(compile_timeout_s=1, case_timeout_s=2)
    hang = SimpleNamespace(symptom="hang")

    def feed(guard, n_hangs, n_cases):
        for i in range(n_hangs):
            guard("finding", key=hang, fid=f"f{i}")
        for n in range(1, n_cases + 1):
            guard("case", counts={"cases": n})
    with pytest.raises(_SettingWastesCampaign, match="4 of the first 5 cases hung"):
        feed(_hang_guard(cfg, resume=False), 4, 5)
    feed(_hang_guard(cfg, resume=False), 2, 10)
    g = _hang_guard(cfg, resume=False)
    feed(g, 0, 10)
    feed(g, 11, 0)
    g("case", counts={"cases": 11})  # 11 hangs of 11, but past the early window
    feed(_hang_guard(cfg, resume=True), 5, 5)


def test_report_next_step_reads_the_known_registry():
    from fuzzcomp.findings.triage import BucketKey
    from fuzzcomp.render.bugreport import next_step, report_title
    case = generate(3)
    key = BucketKey("numeric", "backend", "output values | culprit op: torch.add")
    base = {"id": "K1", "title": "t", "issue": None, "state": None, "fixed_in": None, "fix_pr": None,
            "repro": None, "matched_by": "op", "advice": None}
    assert next_step({}, case, key).startswith("Next step: file it upstream (search first: https://github.com/")
    assert next_step({"known": False}, case, key).startswith("Next step: file it upstream")
    url = "https://github.com/pytorch/pytorch/issues/1"
    assert next_step({"known": dict(base, issue=url, state="open")}, case, key) == \
        f"Next step: known upstream: {url} (open) — add your case there."
    assert next_step({"known": dict(base, fixed_in="2.13")}, case, key).startswith("Next step: fixed in torch 2.13: upgrade")
    assert next_step({"known": dict(base, advice="ignore on 2.12")}, case, key) == \
        "Next step: known, not reported upstream yet: file it (ignore on 2.12)."
    title = report_title(case, key, "output[0]: rmse vs fp64: compiled 0.1 > 3 x eager 0; max abs diff 0.1")
    assert title.endswith("returns wrong values in output[0], from torch.add") and "rmse" not in title
    state = BucketKey("mutation", "backend", "torch globals: deterministic")
    detail = "state torch globals after call: eager='grad=True deterministic=False' compiled='grad=True deterministic=True'"
    assert "global state" in report_title(case, state, detail) and "input" not in report_title(case, state, detail)


def test_a_run_refused_by_its_settings_leaves_no_empty_folder(tmp_path):
    """A setting refused after the folder was claimed (a share above 1) leaves reports/ as it was."""
    _one_line_error(_run(tmp_path, "run", "--cases", "2", "--backend", "eager", "--minimize-share", "2"), 2)
    assert not list(tmp_path.glob("reports/run-*"))
