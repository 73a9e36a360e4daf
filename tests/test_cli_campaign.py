"""`fuzzcomp run` end to end as a user drives it: exit 1 with findings, 0 without, finding ids that
resolve in replay/show/promote, CI files, world-readable files, TORCH_TRACE logs, doctor, bisect."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzcomp.base import exitcodes


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """One small campaign on a planted fault (eager-speed compiles), shared by the tests below."""
    root = tmp_path_factory.mktemp("planted")
    env = dict(os.environ, XDG_CACHE_HOME=str(root / "cache"))
    out = root / "camp"
    p = subprocess.run([sys.executable, "-m", "fuzzcomp", "run", "--cases", "8", "--jobs", "1", "--no-minimize",
                        "--backend", "fuzzcomp.planted:perturb_add", "--out", str(out),
                        "--junit-xml", str(root / "junit.xml"), "--sarif", str(root / "f.sarif")],
                       capture_output=True, text=True, timeout=600, env=env)
    return root, out, env, p


def test_run_with_findings_exits_1_and_prints_ids_that_resolve(planted):
    root, out, env, p = planted
    assert p.returncode == exitcodes.BUG, p.stderr[-2000:]
    ids = re.findall(r"finding\s+(\d{10}-s\d+)", p.stdout + p.stderr)
    assert ids, p.stdout
    fid = ids[0]
    assert (out / "findings" / fid / "finding.json").is_file()
    # the id alone resolves (the campaign was remembered), from another folder, in show
    shown = subprocess.run([sys.executable, "-m", "fuzzcomp", "show", fid], capture_output=True, text=True,
                           env=env, cwd=str(root), timeout=300)
    assert shown.returncode == 0 and shown.stdout.startswith(f"# finding {fid}: numeric/") and "def fn(" in shown.stdout


def test_ci_files_and_file_modes(planted):
    root, out, env, p = planted
    xml = (root / "junit.xml").read_text()
    assert '<testsuite name="fuzzcomp"' in xml and "<failure" in xml and 'name="campaign"' in xml
    sarif = json.loads((root / "f.sarif").read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"][0]["ruleId"] == "numeric"
    for f in [out / "campaign.json", out / "summary.json", *out.glob("findings/*/finding.json")]:
        assert f.stat().st_mode & 0o077 == 0o044 & ~_umask(), f


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_replay_by_id_shows_the_bug(planted):
    root, out, env, p = planted
    fid = sorted(x.name for x in (out / "findings").iterdir())[0]
    r = subprocess.run([sys.executable, "-m", "fuzzcomp", "replay", fid, "--campaign", str(out)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == exitcodes.BUG and "numeric/" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]


def test_report_of_a_campaign_with_findings_is_1(planted, cli):
    root, out, env, p = planted
    r = cli("report", out)
    assert r.returncode == exitcodes.BUG and "findings" in r.stdout


def _fake_minimised(planted_out: Path, dest: Path, bug: bool = True) -> Path:
    """A finding as a real-backend bug with a minimised repro (promote refuses planted backends)."""
    import shutil
    src = sorted((planted_out / "findings").iterdir())[0]
    shutil.copytree(src, dest)
    data = json.loads((dest / "finding.json").read_text())
    data["case"] = json.loads(json.dumps(data["case"]).replace("fuzzcomp.planted:perturb_add", "aot_eager"))
    (dest / "finding.json").write_text(json.dumps(data))
    (dest / "minimized.json").write_text(json.dumps({"case": data["case"]}))
    (dest / "repro.py").write_text("print('BUG: output 0 differs')\nraise SystemExit(1)\n" if bug else "print('OK')\n")
    return dest


def test_promote_hint_collects_and_issue_can_be_added_later(planted, cli, tmp_path):
    root, out, env, p = planted
    finding = _fake_minimised(out, tmp_path / "camp" / "findings" / "0000000009-s1")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    r = cli("promote", finding, "--corpus", corpus)
    assert r.returncode == 0, r.stderr
    hint = r.stdout.strip().splitlines()[-1].split("run the corpus: ", 1)[1]
    collected = subprocess.run(hint.split() + ["--collect-only", "-q"] + (["-n", "0"] if " -n " in hint else []), capture_output=True,
                               text=True, cwd=str(tmp_path), timeout=300)
    entry = next(f for f in corpus.glob("*.py") if f.name != "conftest.py")
    assert f"{entry.name}::{entry.stem}" in collected.stdout, collected.stdout + collected.stderr
    r = cli("promote", finding, "--corpus", corpus, "--issue", "https://github.com/pytorch/pytorch/issues/1")
    assert r.returncode == 0 and r.stdout.startswith("updated:"), r.stdout + r.stderr
    assert "issue=https://github.com/pytorch/pytorch/issues/1" in entry.read_text().splitlines()[0]
    assert "status=open" in entry.read_text().splitlines()[0]


def test_clean_campaign_exits_0(cli, tmp_path):
    r = cli("run", "--cases", "2", "--jobs", "1", "--backend", "eager", "--quiet", "--out", tmp_path / "c",
            "--families", "pointwise", env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path)))
    assert r.returncode == exitcodes.CLEAN, r.stderr[-2000:]
    cfg = json.loads((tmp_path / "c" / "campaign.json").read_text())["config"]
    assert cfg["generator"] == {"families": ["pointwise"]}


def test_replay_trace_writes_tlparse_logs(cli, tmp_path):
    repro = tmp_path / "repro.py"
    repro.write_text("import torch\nf = torch.compile(lambda x: x.sin() + 1, backend='eager')\n"
                     "f(torch.ones(3))\nprint('OK: fixed')\n")
    r = cli("replay", repro, "--trace", tmp_path / "trace")
    assert r.returncode == 0, r.stderr
    assert list((tmp_path / "trace").glob("*.log")) and "tlparse" in r.stdout


def test_doctor(cli):
    ok = cli("doctor", "--backend", "eager")
    assert ok.returncode == 0 and "ready for `fuzzcomp run`" in ok.stdout
    for line in ("torch", "triton", "c++", "gpu", "ray", "bisect", "backend"):
        assert re.search(rf"^(ok|warn|FAIL)\s+{re.escape(line)}\s", ok.stdout, re.M), line
    # a backend that compiles but whose kernels fail: a campaign of findings, not a broken setup
    buggy = cli("doctor", "--backend", "fuzzcomp.planted:runtime_crash")
    assert buggy.returncode == 0 and re.search(r"^warn\s+backend .*one bug", buggy.stdout, re.M), buggy.stdout
    # a "backend" that returns no callable cannot run a single case
    bad = cli("doctor", "--backend", "builtins:print")
    assert bad.returncode == exitcodes.HARNESS and re.search(r"^FAIL\s+backend", bad.stdout, re.M), bad.stdout


@pytest.mark.slow
def test_bisect_names_the_lowering(cli, tmp_path):
    """Inductor's own planted relu bug: the bisector must land on lowerings/relu (about 16 probes)."""
    repro = tmp_path / "relu_repro.py"
    repro.write_text(
        "import torch\nimport torch._inductor.config as cfg\ncfg.cpp.inject_relu_bug_TESTING_ONLY = 'accuracy'\n"
        "def fn(x):\n    return (torch.relu(x) * 2,)\nx = torch.linspace(-2, 2, 16)\n"
        "ref, res = fn(x)[0], torch.compile(fn, backend='inductor')(x)[0]\n"
        "if not torch.allclose(ref, res):\n    print('BUG: relu differs')\n    raise SystemExit(1)\nprint('OK')\n")
    r = cli("bisect", repro, timeout=1800)
    assert r.returncode == exitcodes.BUG, r.stdout[-3000:] + r.stderr[-2000:]
    assert "bisect: backend=inductor  subsystem=lowerings" in r.stdout and "debug_info=relu" in r.stdout


def test_replay_of_a_finding_whose_backend_module_is_gone_is_3(planted, cli, tmp_path):
    import shutil
    root, out, env, p = planted
    src = sorted((out / "findings").iterdir())[0]
    dest = tmp_path / "camp" / "findings" / src.name
    shutil.copytree(src, dest)
    text = (dest / "finding.json").read_text().replace("fuzzcomp.planted:perturb_add", "gone_backend_mod:fn")
    (dest / "finding.json").write_text(text)
    r = cli("replay", dest)
    assert r.returncode == exitcodes.HARNESS, r.stdout + r.stderr
    assert "cannot import backend module 'gone_backend_mod'" in r.stderr.strip().splitlines()[-1]
