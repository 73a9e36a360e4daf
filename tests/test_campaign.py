"""Campaign engine: configuration, CLI errors, scheduling of minimisation, summary and report.

Most tests here build what they need without starting workers; the one real
interleaving run is marked slow.
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from fuzzcomp.campaign import minimiser_pool as pool_mod
from fuzzcomp.campaign.cases import case_features
from fuzzcomp.campaign.loop import Campaign
from fuzzcomp.cli.parser import main
from fuzzcomp.base.config import ConfigError, RunConfig, validate
from fuzzcomp.generators import generate
from fuzzcomp.generators.ir import Assign, Mutate, op_names, walk_program
from fuzzcomp.report.html import render_html
from fuzzcomp.workers.isolation_verdicts import crash_verdict
from fuzzcomp.report.summary import render_markdown, render_text, summarise
from fuzzcomp.cli.settings_file import load_settings
from fuzzcomp.findings.store import Store
from fuzzcomp.findings.triage import bucket_of


# ---- bad command-line values: one line, exit 2 -------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["run", "--minutes", "-3"], "must be positive"),
    (["run", "--minutes", "abc"], "not a number"),
    (["run", "--cases", "0"], "must be positive"),
    (["run", "--jobs", "-1", "--cases", "1"], "must be positive"),
    (["run", "--cases", "1", "--backend", "no_such_backend"], "unknown backend 'no_such_backend'"),
    (["run", "--cases", "1", "--backend", "no_such_module:fn"], "cannot import backend module"),
    (["run", "--cases", "1", "--backend", "fuzzcomp.planted:nope"], "has no attribute 'nope'"),
    (["run", "--cases", "1", "--memory-mb", "100"], "too small"),
    (["run", "--cases", "1", "--minimize-share", "1.5"], "between 0 and 1"),
    (["run", "--backend", "eager"], "give a budget"),
    (["run", "--cases", "1", "--resume", "/nonexistent/fuzzcomp-dir"], "not a fuzzcomp campaign folder"),
    (["run", "--cases", "1", "--config", "/nonexistent.toml"], "no such file"),
])
def test_bad_values_give_one_line_and_exit_2(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc = main(argv + ["--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith("fuzzcomp: error:") and words in err[0], err


# ---- settings file ------------------------------------------------------------------------

def test_settings_from_fuzzcomp_toml_and_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.fuzzcomp]\njobs = 3\n[tool.fuzzcomp.generator]\nmax_calls = 2\n')
    s, src = load_settings(folder=str(tmp_path))
    assert s == {"jobs": 3, "generator": {"max_calls": 2}} and src.endswith("pyproject.toml")
    (tmp_path / "fuzzcomp.toml").write_text('case_timeout = 30\nminimize = false\n')
    s, src = load_settings(folder=str(tmp_path))          # fuzzcomp.toml wins
    assert s == {"case_timeout": 30, "minimize": False} and src.endswith("fuzzcomp.toml")


@pytest.mark.parametrize("text, words", [
    ("jobs = 'two'", "jobs must be a int"),
    ("job = 2", "unknown setting 'job'"),
    ("[ops]\n'torch.add' = 3", "op weights are not configurable"),
    ("[ops]\nonly = ['torch.ad']", "did you mean torch.add"),
    ("[ops]\nfamilies = ['veiw']", "did you mean view"),
    ("[tolerances]\nrtol = 0.1", "tolerances are not configurable"),
    ("[generator]\nmax_stmtz = 3", "unknown generator setting 'max_stmtz'"),
    ("[generator]\np_struct = 2.0", "out of range"),
    ("[generator]\nmax_stmts = 1.5", "must be a int"),
    ("jobs = [", "not valid TOML"),
])
def test_bad_settings_file(tmp_path, text, words):
    (tmp_path / "fuzzcomp.toml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_settings(folder=str(tmp_path))
    assert words in str(err.value) and "fuzzcomp.toml" in str(err.value)


def test_settings_file_reaches_the_run_config(tmp_path, monkeypatch, capsys):
    from fuzzcomp.cli.parser import build_parser
    from fuzzcomp.cli.commands import run_config
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fuzzcomp.toml").write_text('backend = "eager"\nminutes = 7\ncase_timeout = 33\n'
                                            '[generator]\nmax_stmts = 4\n')
    args = build_parser().parse_args(["run", "--case-timeout", "44"])
    cfg, resume = run_config(args)
    assert cfg.backend == "eager" and cfg.seconds == 420 and cfg.case_timeout_s == 44  # the flag wins
    assert cfg.generator == {"max_stmts": 4} and cfg.out.startswith("reports/run-") and not resume
    assert cfg.memory_mb == 4096 and cfg.minimize_share == 0.25
    c = Campaign(cfg)
    assert c.gen_config.max_stmts == 4
    bad = tmp_path / "bad.toml"
    bad.write_text("memory_mb = 10")
    assert main(["run", "--config", str(bad), "--cases", "1", "--backend", "eager"]) == 2
    assert "too small" in capsys.readouterr().err


def test_validate_rejects_generator_knobs_of_the_wrong_kind(tmp_path):
    with pytest.raises(ConfigError):
        validate(RunConfig(out=str(tmp_path / "x"), cases=1, backend="eager", generator={"max_calls": 0}))


# ---- case metadata for the coverage plots ---------------------------------------------------

def test_case_features_and_ops_are_deterministic():
    a, b = generate(7), generate(7)
    assert case_features(a) == case_features(b) and op_names(a.program) == op_names(b.program)
    feats = case_features(a)
    assert any(f.startswith("dtype:") for f in feats) and any(f.startswith("calls:") for f in feats)


# ---- interleaved minimisation: scheduling without real workers --------------------------------

class FakeWorker:
    def __init__(self, i):
        self.index, self.busy, self.cancelled = i, False, False

    def clear_cancel(self):
        self.cancelled = False

    def cancel(self):
        self.cancelled = True


def _campaign_with_findings(tmp_path, jobs=2):
    out = tmp_path / "c"
    c = Campaign(RunConfig(out=str(out), cases=100, jobs=jobs, backend="eager"))
    c._open_store()
    # bucket A found twice, then bucket B once: B's first finding must be minimised before A's second
    for status, index in (("died", 0), ("died", 1), ("timeout", 2)):
        c._record(generate(index), [crash_verdict(status, "x")], index)
    return c


def _fake_finish(order, confirmed=True):
    def fake_finish(store, fid, worker, **kw):
        order.append(fid)
        time.sleep(0.05)
        return {"id": fid, "minimize_s": 0.05, "confirmed": confirmed}
    return fake_finish


def _join_all(c, pool):
    for m in list(c._minimisers):
        m["thread"].join()
    c._reap_minimisers(pool)


def test_new_buckets_are_minimised_first_and_the_share_is_kept(tmp_path, monkeypatch):
    c = _campaign_with_findings(tmp_path)
    order = []
    monkeypatch.setattr(pool_mod, "finish_finding", _fake_finish(order))
    pool = [FakeWorker(0), FakeWorker(1)]
    c.t_start = time.monotonic() - 100          # 200 worker-seconds so far
    c.minimise_s = 49.0                          # below 25%: may start
    c._maybe_minimise(pool, end=None, generating=True)
    assert len(c._minimisers) == 1 and len(pool) == 1     # one worker lent, one keeps generating
    _join_all(c, pool)
    assert len(pool) == 2
    # B has no repro yet: it goes ahead of A's second finding, even above the share
    c.minimise_s = 60.0
    c._maybe_minimise(pool, end=None, generating=True)
    assert len(c._minimisers) == 1
    _join_all(c, pool)
    c._maybe_minimise(pool, end=None, generating=True)    # A2: A has a repro, the share holds
    assert c._minimisers == []
    c._maybe_minimise(pool, end=None, generating=False)   # generation over: minimise freely
    _join_all(c, pool)
    ids = [e["id"] for e in Store(c.store.root).events() if e["event"] == "finding"]
    assert order == [ids[0], ids[2], ids[1]] and c.queue == []
    mins = [e for e in Store(c.store.root).events() if e["event"] == "minimized"]
    assert len(mins) == 3 and all("worker_s" in e for e in mins)
    assert (c.store.root / "summary.json").exists()       # every minimisation refreshes the summary


def test_several_minimisations_run_in_parallel(tmp_path, monkeypatch):
    """With 8 workers two minimisers run at once (one per four workers), one per bucket; when
    generation is over every free worker minimises."""
    c = _campaign_with_findings(tmp_path, jobs=8)
    order = []
    monkeypatch.setattr(pool_mod, "finish_finding", _fake_finish(order))
    pool = [FakeWorker(i) for i in range(8)]
    c.t_start = time.monotonic() - 100
    c._maybe_minimise(pool, end=None, generating=True)
    assert len(c._minimisers) == 2 and len(pool) == 6
    assert len({m["slug"] for m in c._minimisers}) == 2   # two buckets, not two findings of one
    _join_all(c, pool)
    assert len(pool) == 8 and len(c._has_repro) == 2


def test_a_bucket_without_a_confirmed_repro_gets_its_second_finding_minimised(tmp_path, monkeypatch):
    c = _campaign_with_findings(tmp_path)
    order = []
    monkeypatch.setattr(pool_mod, "finish_finding", _fake_finish(order, confirmed=False))
    pool = [FakeWorker(0), FakeWorker(1)]
    c.t_start = time.monotonic() - 100
    c.minimise_s = 60.0                          # above the share: only buckets with no repro run
    for _ in range(3):
        c._maybe_minimise(pool, end=None, generating=True)
        _join_all(c, pool)
    assert len(order) == 3 and c._has_repro == set()


def test_no_minimisation_starts_near_the_deadline(tmp_path, monkeypatch):
    c = _campaign_with_findings(tmp_path)
    monkeypatch.setattr(pool_mod, "finish_finding", lambda *a, **k: pytest.fail("started"))
    c._maybe_minimise([FakeWorker(0)], end=time.monotonic() + 5, generating=False)
    assert c._minimisers == []


# ---- summary, Markdown and HTML from a folder ---------------------------------------------------

def synthetic_campaign(root: Path) -> Store:
    """A campaign folder written through the Store API, as a run would leave it."""
    store = Store(root)
    store.create({"config": RunConfig(out=str(root), cases=5, jobs=2, backend="eager").to_json(),
                  "versions": {"torch": "x"}})
    store.event("start")
    for i in range(5):
        case = generate(i)
        store.event("case", index=i, seed=i, valid=i != 3, status="done",
                    timings={"eager": 0.1, "compiled": 0.5, "generate": 0.01, "job": 0.7},
                    ops=op_names(case.program), features=case_features(case),
                    **({"eager_kernel_bugs": ["aten.median.dim: reads memory outside its input view"]}
                       if i == 4 else {}))
    v = crash_verdict("died", "worker died with exit code -6")
    fid = store.record_finding(generate(2), [v], bucket_of(v), origin="case 2")
    store.event("finding", id=fid, bucket=bucket_of(v).slug(), symptom="segfault", stage="unknown",
                new_bucket=True)
    store.event("stop", reason="budget spent")
    return store


def test_summary_markdown_and_html(tmp_path):
    store = synthetic_campaign(tmp_path / "c")
    s = summarise(store)
    assert s["cases"] == 5 and s["valid"] == 4 and s["findings"] == 1 and s["jobs"] == 2
    assert s["phase_s"]["compiled"] == 2.5 and s["phase_s"]["worker other (judge, IPC)"] == 0.5
    assert s["eager_kernel_bugs"] == {"aten.median.dim: reads memory outside its input view": 1}
    md = render_markdown(s)
    assert "first seen" in md and "segfault" in md and "report.html" in md
    assert "`aten.median.dim: reads memory outside its input view` x1" in md
    assert "screened (eager's own kernel, not the compiler): aten.median.dim" in render_text(s)
    page = render_html(store, s)
    assert page.count("<svg") == 6 and "segfault-unknown-" in page and "<script" not in page
    assert "Compiler-signal coverage" in page
    assert "New buckets over time" in page and "Op coverage" in page and "Feature coverage" in page


def test_report_command_rebuilds_everything(tmp_path, capsys):
    synthetic_campaign(tmp_path / "c")
    assert main(["report", str(tmp_path / "c")]) == 1  # 1: the campaign has a finding
    for name in ("summary.md", "summary.json", "report.html"):
        assert (tmp_path / "c" / name).exists()
    assert "report.html" in capsys.readouterr().out


def test_html_escapes_what_it_shows(tmp_path):
    store = synthetic_campaign(tmp_path / "c")
    store.event("case", index=9, seed=9, valid=True, status="done", timings={},
                ops=["<script>alert(1)</script>"], features=[])
    page = render_html(store, summarise(store))
    assert "<script>alert" not in page and "&lt;script&gt;" in page


# ---- a real interleaved run ----------------------------------------------------------------------

@pytest.mark.slow
def test_minimisation_runs_while_generation_goes_on(tmp_path):
    out = tmp_path / "c"
    s = Campaign(RunConfig(out=str(out), cases=24, jobs=2, backend="fuzzcomp.planted:perturb_add",
                           minimize_budget_s=20, case_timeout_s=60)).run()
    ev = list(Store(out).events())
    kinds = [e["event"] for e in ev]
    began, ended = kinds.index("minimize-start"), kinds.index("minimized")
    assert "case" in kinds[began + 1:ended], "no case finished while the first finding was minimised"
    assert s["findings"] >= 1 and any(b.get("repro") for b in s["buckets"].values())
    assert sorted(e["index"] for e in ev if e["event"] == "case") == list(range(24))


def _registry(tmp_path, monkeypatch, bugs):
    """A registry of ``bugs`` that the campaign's matching reads instead of the shipped one."""
    from fuzzcomp.findings.known import forget_cache
    corpus = tmp_path / "reg"
    corpus.mkdir()
    (corpus / "known_bugs.json").write_text(json.dumps({"bugs": bugs}))
    monkeypatch.setenv("FUZZCOMP_CORPUS", str(corpus))
    forget_cache()
    return corpus


def _registry_claiming(tmp_path, monkeypatch, slug, repro=None):
    return _registry(tmp_path, monkeypatch, [{"id": "known-one", "title": "a known bug", "issue": "https://x/1",
                                              "state": "open", "buckets": [slug], "repro": repro}])


class _LabelRig:
    """One recorded finding of ``case`` with ``verdict`` under a registry of ``bugs``, and
    ``finish_finding`` on a fake worker: ``probe`` stands in for each isolated run (default: no
    verdict), ``minimised(case)`` for the minimiser's result. ``budgets`` holds each
    minimisation's budget, ``checks`` each fresh-process check."""

    def __init__(self, tmp_path, monkeypatch, bugs, case, verdict, probe=None, minimised=None):
        from fuzzcomp.campaign import pipeline
        from fuzzcomp.reduce.minimise import ReduceStats
        _registry(tmp_path, monkeypatch, bugs)
        self.pipeline, self.case, self.verdict = pipeline, case, verdict
        self.c = Campaign(RunConfig(out=str(tmp_path / "c"), cases=100, jobs=1, backend="eager"))
        self.c._open_store()
        self.c._record(case, [verdict], 0)
        self.fid = self.c.queue[0][-1]
        self.budgets, self.checks = [], []

        def fake_minimise(case_, pred, budget_s, **kw):
            self.budgets.append(budget_s)
            return (minimised(case_) if minimised else case_), ReduceStats(probes=1)
        monkeypatch.setattr(pipeline, "probe_keys", probe or (lambda *a, **k: (True, set(), [])))
        monkeypatch.setattr(pipeline, "minimise", fake_minimise)
        monkeypatch.setattr(pipeline, "localise_stage", lambda *a, **k: None)
        monkeypatch.setattr(pipeline, "confirm_repro",
                            lambda *a, **k: self.checks.append(1) or {"confirmed": True})

    def finish(self) -> dict:
        return self.pipeline.finish_finding(self.c.store, self.fid, FakeWorker(0), minimize=True, budget_s=120,
                                            timeout_s=5)


def test_a_settled_known_bug_takes_no_worker_and_a_new_one_does(tmp_path, monkeypatch):
    """A bucket the registry holds is labelled known when it is found and recorded at once, with no
    worker, minimisation or repro (an H200 campaign spent 18% of its minimisation worker time
    rendering 40 such repros); the new bug found after it is minimised."""
    from fuzzcomp.findings.triage import bucket_of
    _registry_claiming(tmp_path, monkeypatch, bucket_of(crash_verdict("died", "x")).slug())
    c = Campaign(RunConfig(out=str(tmp_path / "c"), cases=100, jobs=2, backend="eager"))
    c._open_store()
    c._record(generate(0), [crash_verdict("died", "x")], 0)       # known, found first
    c._record(generate(1), [crash_verdict("timeout", "x")], 1)    # new
    order = []
    monkeypatch.setattr(pool_mod, "finish_finding", _fake_finish(order))
    pool = [FakeWorker(0), FakeWorker(1), FakeWorker(2)]
    c.t_start = time.monotonic() - 1000
    for _ in range(2):   # while cases are generated, a known bug is not minimised at all
        c._maybe_minimise(pool, end=None, generating=True)
        _join_all(c, pool)
    found = [e for e in Store(c.store.root).events() if e["event"] == "finding"]
    assert [e["known"] for e in found] == ["known-one", None]
    assert order == [found[1]["id"]]
    c._maybe_minimise(pool, end=None, generating=False)   # and never later
    _join_all(c, pool)
    assert order == [found[1]["id"]]
    st = json.loads(c.store.path(found[0]["id"], "status.json").read_text())
    assert st["known"]["id"] == "known-one" and st["settled"] and "not minimised" in st["known_skipped"]
    assert not c.store.path(found[0]["id"], "repro.py").exists()
    s = summarise(Store(c.store.root))
    b = s["buckets"][found[0]["bucket"]]
    assert b["known"]["id"] == "known-one" and b["repro"] is None and s["minimise_s_by_group"]["known"] == 0


@pytest.mark.parametrize("repro", ["r.py", None])
def test_a_known_bug_of_a_settled_identity_costs_no_minimisation_or_fresh_process(tmp_path, monkeypatch,
                                                                                    repro):
    from fuzzcomp.campaign import pipeline
    from fuzzcomp.findings.triage import bucket_of
    _registry_claiming(tmp_path, monkeypatch, bucket_of(crash_verdict("died", "x")).slug(), repro=repro)
    c = Campaign(RunConfig(out=str(tmp_path / "c"), cases=100, jobs=1, backend="eager"))
    c._open_store()
    monkeypatch.setattr(pool_mod, "finish_finding", lambda *a, **k: pytest.fail("a known bug took a worker"))
    c._record(generate(0), [crash_verdict("died", "x")], 0)
    assert not c.queue                                   # recorded at once, never queued
    fid = Store(c.store.root).finding_ids()[0]
    assert json.loads(c.store.path(fid, "status.json").read_text())["settled"]
    # `fuzzcomp minimize ID` (finish_finding) on it still writes the repro, and re-checks nothing
    monkeypatch.setattr(pipeline, "minimise", lambda *a, **k: pytest.fail("a known bug was minimised"))
    monkeypatch.setattr(pipeline, "confirm_repro", lambda *a, **k: pytest.fail("a known bug was re-checked"))
    info = pipeline.finish_finding(c.store, fid, FakeWorker(0), minimize=True, budget_s=5, timeout_s=5)
    assert info["known"]["id"] == "known-one" and info["known"]["issue"] == "https://x/1"
    assert "not minimised" in info["known_skipped"]
    assert json.loads(c.store.path(fid, "status.json").read_text())["known"]["id"] == "known-one"
    assert (c.store.path(fid, "repro.py")).exists() and (c.store.path(fid, "report.md")).exists()


@pytest.mark.parametrize("still_known", [True, False])
def test_a_silent_known_bug_costs_a_short_label_check_not_a_confirmation(tmp_path, monkeypatch, still_known):
    """A rule on a silent symptom claims the finding: it is reduced for at most KNOWN_CHECK_S, and
    when the minimised program's ops still match it is not re-checked in fresh processes; when
    they no longer match, it is a new bug and is confirmed like one."""
    from oracles.verdict import Verdict
    case, other = generate(0), generate(3)
    assert "torch.erf" in op_names(case.program) and "torch.erf" not in op_names(other.program)
    probes = []
    rig = _LabelRig(tmp_path, monkeypatch, [{"id": "erf-numeric", "title": "erf differs", "issue": "https://x/2",
                                             "state": "open", "match": {"symptoms": ["numeric"], "ops_any": ["torch.erf"]}}],
                    case, Verdict("numeric", "unknown", "same", "output 0 differs"),
                    probe=lambda *a, **k: probes.append(1) or (None, None, []),
                    minimised=lambda c: c if still_known else other)
    info = rig.finish()
    assert rig.budgets == [rig.pipeline.KNOWN_CHECK_S]
    # the minimised program's own verdict is probed only for a report that will be read: one
    # compile less for every known bug (an H200 campaign spent 11% of its minimisation on them)
    if still_known:
        assert info["known"]["id"] == "erf-numeric" and rig.checks == [] and "label checked" in info["repro_says"]
        assert probes == []
    else:
        assert info["known"] is False and rig.checks == [1] and info["confirmed"] is True and probes == [1]


@pytest.mark.parametrize("outcome", ["gone", "stays", "eager-rejects", "stays-other-known", "other-explains",
                                     "each-alone"])
def test_a_label_check_is_a_knock_out_probe_per_need_of_the_rule(tmp_path, monkeypatch, outcome):
    """A rule claims a silent finding on the ops of its whole program. The label check first runs
    the program without what the rule names (one probe per need): the bug gone, it is the entry's
    bug and nothing is minimised; the bug still there, the rule does not explain it, and it is
    minimised with the full budget and confirmed as new; a knock-out eager rejects cannot tell,
    and the minimising label check decides. Where another entry claims what the knock-out left,
    that entry's needs are knocked out of the whole program too: the bug gone, it is that
    entry's bug (no minimisation); still there, the program without both entries' needs is run:
    the bug gone, each known bug alone showed it and the claim stands (CPU 1513)."""
    from oracles.verdict import Verdict
    from fuzzcomp.findings.triage import bucket_of
    bugs = [{"id": "cos-numeric", "title": "cos differs", "issue": "https://x/3", "state": "open",
             "match": {"symptoms": ["numeric"], "ops_any": ["torch.cos"]}}]
    if outcome in ("stays-other-known", "other-explains"):  # what the knock-out leaves, another claims
        bugs.append({"id": "any-op-numeric", "title": "another known bug", "issue": "https://x/4",
                     "state": "open", "match": {"symptoms": ["numeric"], "ops_any": ["torch.*"]}})
    if outcome == "each-alone":  # a second known bug, on an op of its own: either one shows the bucket
        bugs.append({"id": "index-select-numeric", "title": "index_select differs", "issue": "https://x/6",
                     "state": "open", "match": {"symptoms": ["numeric"], "ops_any": ["torch.index_select"]}})
    case = generate(3)  # torch.cos only inside a branch
    verdict = Verdict("numeric", "unknown", "same", "output 0 differs")
    probed = []

    def fake_probe(worker, cand, *a, **k):
        probed.append(cand)
        if outcome == "eager-rejects":
            return False, set(), []
        left = {s.op for s in walk_program(cand.program) if isinstance(s, (Assign, Mutate))}
        if outcome in ("other-explains", "each-alone"):  # the bug needs some torch.* op / cos or index_select
            stays = any(o.startswith("torch.") for o in left) if outcome == "other-explains" else \
                bool(left & {"torch.cos", "torch.index_select"})
            return (True, {bucket_of(verdict)}, [verdict]) if stays else (True, set(), [])
        return (True, {bucket_of(verdict)}, [verdict]) if outcome.startswith("stays") else (True, set(), [])
    rig = _LabelRig(tmp_path, monkeypatch, bugs, case, verdict, probe=fake_probe)
    info = rig.finish()
    knocked = probed[0]
    assert "torch.cos" in {s.op for s in walk_program(case.program) if isinstance(s, (Assign, Mutate))}
    if outcome == "each-alone":  # either entry may claim first; the three probes are the same
        assert [len({s.op for s in walk_program(c.program) if isinstance(s, (Assign, Mutate))}
                    & {"torch.cos", "torch.index_select"}) for c in probed] == [1, 1, 0]
        assert info["label_check"]["says"] == "known" and info["label_check"]["probes"] == 3
        assert info["known"]["id"] in ("cos-numeric", "index-select-numeric") and rig.budgets == []
        return
    assert "torch.cos" not in {s.op for s in walk_program(knocked.program) if isinstance(s, (Assign, Mutate))}
    # the other entry's knock-out: one probe more; still there, one more without both entries' needs
    hops = {"stays-other-known": 2, "other-explains": 1}.get(outcome, 0)
    assert info["label_check"]["how"] == "knock-out" and info["label_check"]["probes"] == 1 + hops
    if outcome == "other-explains":
        assert info["known"]["id"] == "any-op-numeric" and info["label_check"]["moved_from"] == "cos-numeric"
        assert info["label_check"]["says"] == "known" and rig.budgets == [] and rig.checks == []
    elif outcome == "gone":
        assert info["known"]["id"] == "cos-numeric" and rig.budgets == [] and rig.checks == [] and len(probed) == 1
        assert "knock-out" in info["repro_says"] and "minimize_s" in info
        assert not rig.c.store.path(rig.fid, "minimized.json").exists()
    elif outcome == "stays":
        assert info["known"] is False and rig.budgets == [120] and rig.checks == [1] and info["confirmed"] is True
        assert info["label_check"]["says"] == "new"
    else:  # eager rejects the knock-out, or another known bug explains what is left
        assert info["label_check"]["says"] == "cannot tell" and rig.budgets == [rig.pipeline.KNOWN_CHECK_S]
        assert info["known"]["id"] == "cos-numeric" and rig.checks == []


@pytest.mark.parametrize("stage, backend", [("capture", "eager"), ("autograd", "aot_eager"),
                                            ("decomposition", "aot_eager_decomp_partition"),
                                            ("inductor", "inductor"), ("unknown", "inductor")])
def test_a_knock_out_probes_on_the_backend_of_the_buckets_stage(tmp_path, monkeypatch, stage, backend):
    """A bucket the ladder placed below Inductor shows on that stage's rung backend: its
    knock-outs compile there (no code generation), the rest of the case as it was; a bucket at
    Inductor or of unknown stage is probed on Inductor."""
    from oracles.verdict import Verdict
    bugs = [{"id": "cos-numeric", "title": "cos differs", "issue": "https://x/3", "state": "open",
             "match": {"symptoms": ["numeric"], "ops_any": ["torch.cos"]}}]
    case = generate(3)
    probed = []

    def fake_probe(worker, cand, *a, **k):
        probed.append(cand)
        return True, set(), []
    rig = _LabelRig(tmp_path, monkeypatch, bugs, case, Verdict("numeric", stage, "same", "output 0 differs"),
                    probe=fake_probe)
    info = rig.finish()
    assert info["label_check"]["says"] == "known" and len(probed) == 1
    assert probed[0].compile.backend == backend
    assert probed[0].compile.device == case.compile.device and probed[0].compile.dynamic == case.compile.dynamic
    assert probed[0].calls == case.calls


@pytest.mark.parametrize("rival_needed", [False, True])
def test_a_contested_claim_also_knocks_out_its_rival(tmp_path, monkeypatch, rival_needed):
    """Two entries' rules hold (CPU 1506: a remainder by -inf in a program with a softshrink): the
    claim's knock-out losing the bug is not enough, since the rival's may lose it too. The
    rival's needs are knocked out as well: the bug kept without them, the claim stands with no
    minimisation; lost without them too, the knock-outs cannot tell and the minimising label
    check decides."""
    from oracles.verdict import Verdict
    from fuzzcomp.findings.triage import bucket_of
    bugs = [{"id": "cos-numeric", "title": "cos differs", "issue": "https://x/3", "state": "open",
             "match": {"symptoms": ["numeric"], "signature": "values", "ops_any": ["torch.cos"]}},
            {"id": "topk-numeric", "title": "topk differs", "issue": "https://x/5", "state": "open",
             "match": {"symptoms": ["numeric"], "ops_any": ["torch.topk"]}}]
    verdict = Verdict("numeric", "unknown", "same", "output 0 differs")
    probed = []

    def ops(cand):
        return {s.op for s in walk_program(cand.program) if isinstance(s, (Assign, Mutate))}

    def fake_probe(worker, cand, *a, **k):
        probed.append(cand)
        keeps = "torch.cos" in ops(cand) and not ("torch.topk" not in ops(cand) and rival_needed)
        return (True, {bucket_of(verdict)}, [verdict]) if keeps else (True, set(), [])
    # generate(3): torch.cos inside a branch, a torch.topk in the main body
    rig = _LabelRig(tmp_path, monkeypatch, bugs, generate(3), verdict, probe=fake_probe)
    info = rig.finish()
    assert [("torch.cos" in ops(p), "torch.topk" in ops(p)) for p in probed[:2]] == [(False, True), (True, False)]
    assert info["label_check"]["probes"] == 2 and info["known"]["id"] == "cos-numeric"
    if rival_needed:
        assert info["label_check"]["says"] == "cannot tell" and rig.budgets == [rig.pipeline.KNOWN_CHECK_S]
    else:
        assert info["label_check"]["says"] == "known" and rig.budgets == []


@pytest.mark.parametrize("campaign_left_s", [None, 30.0, 1000.0])
def test_every_reduction_probe_ends_by_the_minimisation_budget(tmp_path, monkeypatch, campaign_left_s):
    """The budget was checked only between probes: a slow compile started near its end ran a 120 s
    minimisation to 216 s (past the campaign's end, its bug unchecked). Each probe's deadline is
    now the budget's end, or the campaign's where that comes first."""
    from oracles.verdict import Verdict
    from fuzzcomp.campaign import pipeline
    from fuzzcomp.reduce.minimise import ReduceStats
    c = Campaign(RunConfig(out=str(tmp_path / "c"), cases=100, jobs=1, backend="eager"))
    c._open_store()
    c._record(generate(0), [Verdict("numeric", "unknown", "same", "output 0 differs")], 0)
    fid = c.queue[0][-1]
    deadlines = []

    def fake_minimise(case_, pred, budget_s, **kw):
        pred(case_)  # one probe
        return case_, ReduceStats(probes=1)
    monkeypatch.setattr(pipeline, "minimise", fake_minimise)
    monkeypatch.setattr(pipeline, "probe_keys", lambda w, case, t, lim=(None, None), deadline=None, fix=None:
                        deadlines.append(deadline) or (True, set(), []))
    monkeypatch.setattr(pipeline, "localise_stage", lambda *a, **k: None)
    monkeypatch.setattr(pipeline, "confirm_repro", lambda *a, **k: {"confirmed": True})
    end = None if campaign_left_s is None else time.monotonic() + campaign_left_s
    t0 = time.monotonic()
    pipeline.finish_finding(c.store, fid, FakeWorker(0), minimize=True, budget_s=60, timeout_s=150, deadline=end)
    probe = deadlines[0]
    assert probe is not None and probe <= t0 + 60 + 1
    if end is not None:
        assert probe <= end
    assert probe >= min(t0 + 60, end or math.inf) - 1


def test_a_late_minimisation_keeps_time_for_its_fresh_process_check(tmp_path, monkeypatch):
    """Near the budget's end the reduction and ladder stop early enough for the fresh-process check
    to run before the end: 20 s a run until a check was timed, then the measured mean (a margin on
    each: an H200 check of 72 s missed the end by 4 s with the bare mean)."""
    c = _campaign_with_findings(tmp_path)
    seen = []

    def fake_finish(store, fid, worker, **kw):
        seen.append(kw["deadline"])
        return {"id": fid, "minimize_s": 0.1, "confirmed": True, "confirm_s": 7.0}
    monkeypatch.setattr(pool_mod, "finish_finding", fake_finish)
    pool = [FakeWorker(0), FakeWorker(1)]
    end = time.monotonic() + 200
    c._maybe_minimise(pool[:1], end=end, generating=False)
    _join_all(c, pool[:0])
    assert seen and seen[0] <= end - (1.25 * 20.0 * c.cfg.confirm_runs + 5.0) + 0.01
    c._maybe_minimise(pool[1:], end=end, generating=False)
    _join_all(c, [])
    reserve = 1.25 * 7.0 + 5.0   # the measured mean, with its margin
    assert len(seen) == 2 and end - reserve - 1.0 <= seen[1] <= end - reserve + 0.01


@pytest.mark.parametrize("outcome", ["closes", "stays", "closes-by-chance"])
def test_an_unclaimed_finding_runs_under_each_candidate_entrys_fix(tmp_path, monkeypatch, outcome):
    """No rule claims the finding, but an entry of its symptom has a fix probe: the program runs
    under that fix. Clean there, and still failing without it: the entry's bug in a form its rule
    misses (H200 seed 1503 had two), labelled known and not minimised. Still failing under the
    fix: new, minimised and confirmed. Clean under the fix but also clean without it: chance,
    not the fix, so new."""
    from oracles.verdict import Verdict
    from fuzzcomp.findings.known import forget_cache
    from fuzzcomp.findings.triage import bucket_of
    bugs = [{"id": "noop-family", "title": "noop removal", "issue": "https://x/9", "state": "open",
             "fix_probe": "no_noop_removal", "match": {"symptoms": ["numeric"], "ops_all": ["torch.no_such_op"]}},
            {"id": "other-stage", "title": "crash", "fix_probe": "expand_reindex_provably_one",
             "affected": ">=9.0", "match": {"symptoms": ["compile-crash"], "ops_all": ["torch.no_such_op"]}}]
    verdict = Verdict("numeric", "unknown", "same", "output 0 differs")
    fixes = []

    def fake_probe(worker, cand, *a, fix=None, **k):
        fixes.append(fix)
        shows = (True, {bucket_of(verdict)}, [verdict])
        if fix is not None:
            return shows if outcome == "stays" else (True, set(), [])
        return (True, set(), []) if outcome == "closes-by-chance" else shows
    rig = _LabelRig(tmp_path, monkeypatch, bugs, generate(3), verdict, probe=fake_probe)
    info = rig.finish()
    assert info["label_check"]["how"] == "fix probe"
    assert fixes[0] == "no_noop_removal" and "expand_reindex_provably_one" not in fixes  # not in this torch
    if outcome == "closes":
        assert info["known"]["id"] == "noop-family" and info["known"]["matched_by"] == "fix probe"
        assert fixes == ["no_noop_removal", None] and rig.budgets == [] and rig.checks == []
        assert "fix probe" in info["repro_says"]
    else:
        assert info["known"] is False and rig.budgets == [120] and rig.checks == [1]
        assert info["label_check"]["says"] == "new"
    # the report says what the run settled: no rule of the registry names this finding
    b = summarise(Store(rig.c.store.root))["buckets"][bucket_of(verdict).slug()]
    assert (b["known"] and b["known"]["id"]) == ("noop-family" if outcome == "closes" else False)
    forget_cache()


def test_a_rule_claim_whose_label_check_never_ran_says_so(tmp_path, monkeypatch):
    """A 30-minute CPU campaign (seed 1505) ended before three silent rule claims were label
    checked; the headline called them known all the same. It now says the check did not run."""
    from oracles.verdict import Verdict
    from fuzzcomp.findings.known import forget_cache
    from fuzzcomp.findings.triage import bucket_of
    _registry(tmp_path, monkeypatch, [{"id": "cos-numeric", "title": "cos differs", "issue": "https://x/3",
                                       "state": "open", "match": {"symptoms": ["numeric"], "ops_any": ["torch.cos"]}}])
    verdict = Verdict("numeric", "unknown", "same", "output 0 differs")
    c = Campaign(RunConfig(out=str(tmp_path / "c"), cases=100, jobs=1, backend="eager"))
    c._open_store()
    c._record(generate(3), [verdict], 0)
    fid = c.queue[0][-1]
    slug = bucket_of(verdict).slug()
    b = summarise(Store(c.store.root))["buckets"][slug]
    assert b["known"]["id"] == "cos-numeric" and b["known"]["unchecked"] is True
    c.store.path(fid, "status.json").write_text(json.dumps(
        {"id": fid, "known": b["known"], "label_check": {"how": "knock-out", "says": "known"}, "minimize_s": 1.0}))
    b = summarise(Store(c.store.root))["buckets"][slug]
    assert b["known"]["id"] == "cos-numeric" and not b["known"].get("unchecked")
    forget_cache()


@pytest.mark.parametrize("own_fix_closes", [True, False])
def test_a_knock_out_label_is_checked_by_the_entrys_fix_where_it_has_one(tmp_path, monkeypatch, own_fix_closes):
    """Two entries can need the same ops (CPU 1513: two nested_compile_region gradient bugs both
    need the region), so a knock-out that loses the bug does not say which. Where the claimed
    entry has a fix probe, its fix must close the program; where it does not and another entry's
    fix does (and the bug shows without any fix), the label moves to that entry."""
    from oracles.verdict import Verdict
    from fuzzcomp.findings.triage import bucket_of
    bugs = [{"id": "cos-numeric", "title": "cos differs", "issue": "https://x/3", "state": "open",
             "fix_probe": "no_noop_removal", "match": {"symptoms": ["numeric"], "ops_any": ["torch.cos"]}},
            {"id": "other-fix", "title": "another bug of cos", "issue": "https://x/7", "state": "open",
             "fix_probe": "expand_reindex_provably_one", "buckets": ["nothing-here"]}]
    verdict = Verdict("numeric", "unknown", "same", "output 0 differs")
    fixes = []

    def fake_probe(worker, cand, *a, fix=None, **k):
        fixes.append(fix)
        ops = {s.op for s in walk_program(cand.program) if isinstance(s, (Assign, Mutate))}
        closes = fix == ("no_noop_removal" if own_fix_closes else "expand_reindex_provably_one")
        shows = "torch.cos" in ops and not closes
        return (True, {bucket_of(verdict)}, [verdict]) if shows else (True, set(), [])
    rig = _LabelRig(tmp_path, monkeypatch, bugs, generate(3), verdict, probe=fake_probe)
    info = rig.finish()
    assert info["label_check"]["says"] == "known" and rig.budgets == []
    if own_fix_closes:  # the knock-out, then the entry's own fix: confirmed
        assert fixes == [None, "no_noop_removal"] and info["known"]["id"] == "cos-numeric"
    else:  # the own fix leaves it; every entry's fix is asked, then one run without a fix
        assert fixes == [None, "no_noop_removal", "expand_reindex_provably_one", None]  # its own fix runs once
        assert info["known"]["id"] == "other-fix" and info["label_check"]["moved_from"] == "cos-numeric"
        assert info["label_check"]["fix_probe"] == "expand_reindex_provably_one"
    assert info["label_check"]["probes"] == len(fixes)


def test_a_rule_claim_is_label_checked_once_per_bucket_not_once_per_entry(tmp_path, monkeypatch):
    """A second finding of the same bucket costs nothing once its bucket was checked; a finding of
    another bucket claimed by the same rule gets its own check (CPU 1513 8638d716 inherited its
    entry's check from a sibling bucket and was another entry's bug)."""
    from oracles.verdict import Verdict
    from fuzzcomp.campaign.pipeline import costs_nothing
    from fuzzcomp.findings.known import claim
    bugs = [{"id": "cos-numeric", "title": "cos differs", "issue": "https://x/3", "state": "open",
             "match": {"symptoms": ["numeric"], "ops_any": ["torch.cos"]}}]
    rig = _LabelRig(tmp_path, monkeypatch, bugs, generate(3), Verdict("numeric", "unknown", "same", "output 0 differs"))
    rig.finish()
    store = rig.c.store
    rig.c._record(generate(3), [Verdict("numeric", "unknown", "same", "output 0 differs")], 1)  # the same bucket
    other_v = Verdict("numeric", "unknown", "same", "output 0 differs", signature="culprit op: torch.cos")
    rig.c._record(generate(3), [other_v], 2)
    ids = [f for f in store.finding_ids() if f != rig.fid]
    by_slug = {store.finding(f)["bucket_obj"].slug(): f for f in ids}
    first_slug = store.finding(rig.fid)["bucket_obj"].slug()
    assert len(by_slug) == 2 and first_slug in by_slug
    for slug, f in by_slug.items():
        d = store.finding(f)
        m = claim(d["bucket_obj"], d["case_obj"])
        assert m is not None and m.bug.id == "cos-numeric"
        assert costs_nothing(store, f, m) == (slug == first_slug)


def test_a_rival_that_knocks_out_the_same_statements_costs_no_probe(tmp_path, monkeypatch):
    """Two entries whose needs name the very same statement (CPU 1514: the input write x3.add_
    was both remat's input:written and an in-place add_): no probe and no minimisation can tell
    them apart, so the claim stands after its own knock-out, with no minimisation."""
    from oracles.verdict import Verdict
    from fuzzcomp.findings.triage import bucket_of
    bugs = [{"id": "cos-numeric", "title": "cos differs", "issue": "https://x/3", "state": "open",
             "match": {"symptoms": ["numeric"], "signature": "values", "ops_any": ["torch.cos"]}},
            {"id": "cos-glob", "title": "cos again", "issue": "https://x/8", "state": "open",
             "match": {"symptoms": ["numeric"], "ops_any": ["torch.co?"]}}]
    verdict = Verdict("numeric", "unknown", "same", "output values differ")
    probed = []

    def fake_probe(worker, cand, *a, **k):
        probed.append(cand)
        ops = {s.op for s in walk_program(cand.program) if isinstance(s, (Assign, Mutate))}
        return (True, {bucket_of(verdict)}, [verdict]) if "torch.cos" in ops else (True, set(), [])
    rig = _LabelRig(tmp_path, monkeypatch, bugs, generate(3), verdict, probe=fake_probe)
    info = rig.finish()
    assert info["label_check"]["says"] == "known" and info["label_check"]["probes"] == 1 and len(probed) == 1
    assert info["known"]["id"] == "cos-numeric" and rig.budgets == []


def test_of_several_entries_one_fix_closes_the_one_whose_rule_fits_is_named():
    """One probe (noop removal off) is shared by a pass's bugs: CPU 1514's gradient bug was
    closed by three entries' fix, and the first in file order was not it. The entry whose rule's
    ops fit the program is named; with none fitting, the first."""
    from oracles.verdict import Verdict
    from fuzzcomp.campaign.pipeline import _likeliest
    from fuzzcomp.findings.known import entry_from_json
    from fuzzcomp.findings.triage import bucket_of
    case = generate(3)  # holds torch.index_select, no torch.erf
    key = bucket_of(Verdict("gradient", "inductor", "same", "grad differs", label="grad of input x1"))
    first = entry_from_json({"id": "a", "title": "t", "fix_probe": "no_noop_removal",
                             "match": {"symptoms": ["aliasing"], "ops_all": ["torch.erf"]}}, "t")
    fits = entry_from_json({"id": "b", "title": "t", "fix_probe": "no_noop_removal",
                            "match": {"symptoms": ["numeric"], "ops_all": ["torch.index_select"]}}, "t")
    assert _likeliest([first, fits], key, case).id == "b"
    from dataclasses import replace
    assert _likeliest([first, replace(fits, id="c", rules=first.rules)], key, case).id == "a"  # none fits
