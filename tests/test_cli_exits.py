"""The exit-code table, driven the way a user types the commands (no compile needed here).

0 clean, 1 bug/findings, 2 usage, 3 harness or environment broken, 130 interrupted.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzcomp import __version__
from fuzzcomp.base import exitcodes

CONSOLE = Path(sys.executable).parent / "fuzzcomp"  # the installed command: no cwd on sys.path


def _err_line(p) -> str:
    lines = p.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("fuzzcomp: error:"), p.stderr
    # a repro's own traceback is passed through (it is the evidence); fuzzcomp's never is
    assert "fuzzcomp/cli/commands.py" not in p.stderr and "fuzzcomp/cli/parser.py" not in p.stderr, p.stderr
    return lines[-1]


def test_version(cli):
    p = cli("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"fuzzcomp {__version__}"


def test_help_shows_exit_codes_generator_settings_and_families(cli):
    top = " ".join(cli("--help").stdout.split())
    assert "3 harness or environment broken" in top and "doctor" in top and "bisect" in top
    run = " ".join(cli("run", "--help").stdout.split())
    for words in ("--ops", "--families", "--exclude", "--junit-xml", "max_stmts=10", "p_struct=0.3",
                  "view", "1: findings recorded"):
        assert words in run, words


@pytest.mark.parametrize("body, code, words", [
    ("def f(:\n    pass\n", exitcodes.HARNESS, "not valid Python (line 1"),
    ("import no_such_backend_module_xyz\n", exitcodes.HARNESS, "No module named 'no_such_backend_module_xyz'"),
    ("raise RuntimeError('the harness broke')\n", exitcodes.HARNESS, "no BUG line"),
    ("print('BUG: planted')\nraise SystemExit(3)\n", exitcodes.HARNESS, "exit 3"),
    ("print('BUG: output 0 differs')\nraise SystemExit(1)\n", exitcodes.BUG, None),
    ("print('OK: fixed')\n", exitcodes.CLEAN, None),
])
def test_replay_of_a_repro_file_maps_its_outcome(cli, tmp_path, body, code, words):
    f = tmp_path / "repro.py"
    f.write_text(body)
    p = cli("replay", f)
    assert p.returncode == code, (p.stdout, p.stderr)
    if words:
        assert words in _err_line(p)


def test_replay_of_a_cuda_repro_on_a_cpu_machine_is_3_not_1(cli, tmp_path):
    import torch
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the no-CUDA path cannot be exercised here")
    f = tmp_path / "repro_cuda.py"
    f.write_text("import torch\nDEVICE = 'cuda'\ntorch.ones(1, device=DEVICE)\nprint('BUG: x')\nraise SystemExit(1)\n")
    p = cli("replay", f)
    assert p.returncode == exitcodes.HARNESS and "no usable CUDA device" in _err_line(p)


def test_backend_with_the_wrong_signature_is_refused_before_the_campaign(cli, tmp_path):
    p = cli("run", "--cases", "1", "--backend", "os:getcwd", "--out", tmp_path / "c")
    assert p.returncode == exitcodes.USAGE
    assert "'os:getcwd' is not a torch.compile backend" in _err_line(p)
    assert not (tmp_path / "c").exists()


def test_backend_module_in_the_current_folder_gets_a_pythonpath_hint(tmp_path):
    (tmp_path / "mybackend.py").write_text("def backend(gm, example_inputs):\n    return gm\n")
    p = subprocess.run([str(CONSOLE), "run", "--cases", "1", "--backend", "mybackend:backend"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert p.returncode == exitcodes.USAGE and "PYTHONPATH=. fuzzcomp" in _err_line(p)


@pytest.mark.parametrize("args, words", [
    (["--ops", "torch.ad"], "did you mean torch.add"),
    (["--families", "veiw"], "did you mean view"),
    (["--exclude", "nosuchop"], "unknown op 'nosuchop'"),
    (["--ops", ","], "--ops needs at least one name"),
])
def test_op_filter_typos_are_usage_errors_with_close_matches(cli, tmp_path, args, words):
    p = cli("run", "--cases", "1", "--out", tmp_path / "c", *args)
    assert p.returncode == exitcodes.USAGE and words in _err_line(p)


def test_ops_table_in_the_settings_file_reaches_the_generator(tmp_path, monkeypatch):
    from fuzzcomp.cli.parser import build_parser
    from fuzzcomp.cli.commands import run_config
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fuzzcomp.toml").write_text('cases = 3\n[ops]\nfamilies = ["view"]\nexclude = ["Tensor.unfold"]\n')
    cfg, _ = run_config(build_parser().parse_args(["run"]))
    assert cfg.generator == {"families": ["view"], "exclude": ["Tensor.unfold"]}
    cfg, _ = run_config(build_parser().parse_args(["run", "--families", "shape,view"]))  # the flag wins
    assert cfg.generator["families"] == ["shape", "view"]


def test_op_filter_changes_what_is_drawn_and_nothing_else():
    from fuzzcomp.generators import emit, generate
    from fuzzcomp.generators.build import GenConfig
    from fuzzcomp.generators.stats import histogram
    from fuzzcomp.generators.registry import FAMILY_OF
    only_view = histogram(range(30), GenConfig(families=("view",)))
    assert only_view.families["view"] > 50
    # the one registry op outside the filter is the module-parameter linear the structure builder emits
    others = {op for op in only_view.ops if FAMILY_OF.get(op, "view") != "view"}
    assert others <= {"torch.nn.functional.linear"}, others
    no_view = histogram(range(30), GenConfig(exclude=("view", "torch.add")))
    assert "view" not in no_view.families and "torch.add" not in no_view.callables
    assert emit(generate(3).program) == emit(generate(3, GenConfig()).program)  # no filter: same programs


def _campaign(root: Path, events: list[str], findings: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "campaign.json").write_text(json.dumps({"config": {"jobs": 1}, "versions": {}}))
    (root / "events.jsonl").write_text("".join(e + "\n" for e in events))
    for fid, text in (findings or {}).items():
        (root / "findings" / fid).mkdir(parents=True)
        (root / "findings" / fid / "finding.json").write_text(text)
    return root


CASES = [json.dumps({"t": 1.0 + i, "event": "case", "index": i, "valid": True}) for i in range(3)]


def test_report_of_a_clean_campaign_is_0(cli, tmp_path):
    p = cli("report", _campaign(tmp_path / "c", CASES))
    assert p.returncode == exitcodes.CLEAN and "cases 3" in p.stdout


def test_report_names_damage_instead_of_under_reporting(cli, tmp_path):
    logged = json.dumps({"t": 5.0, "event": "finding", "id": "0000000001-s9"})
    c = _campaign(tmp_path / "c", CASES + ["garbage", '{"torn', logged],
                  {"0000000002-s4": '{"id": "0000000002-s4", "bucket": '})
    p = cli("report", c)
    assert p.returncode == exitcodes.HARNESS
    assert "2 lines of events.jsonl are not valid JSON (line 4, 5)" in p.stderr
    assert "0000000002-s4" in p.stderr and "0000000001-s9" in p.stderr  # unreadable, and logged but missing
    assert "1 unreadable findings, 1 logged findings missing on disk, 2 bad event lines" in _err_line(p)
    assert "DAMAGED" in p.stdout and "cases 3" in p.stdout
    s = json.loads((c / "summary.json").read_text())
    assert s["damage"]["bad_event_lines"] == [4, 5] and s["damage"]["missing_findings"] == ["0000000001-s9"]


# ---- read-only folders: do what can be done, then one line and exit 3 (or 2 for a flag's path) ------------
def _as_other_user(args: list, home: Path):
    """Run the CLI as a user who cannot write the folder (as root, chmod alone stops nothing)."""
    tmp = home / "tmp"  # the caller's TMPDIR may be a 0700 folder of root's (CI makes one)
    tmp.mkdir(exist_ok=True)
    tmp.chmod(0o777)
    env = dict(os.environ, HOME=str(home), XDG_CACHE_HOME=str(home / "cache"), TMPDIR=str(tmp),
               USER="nobody", LOGNAME="nobody", TORCHINDUCTOR_CACHE_DIR=str(tmp / "inductor"))
    cmd = [sys.executable, "-m", "fuzzcomp", *map(str, args)]
    if os.geteuid() == 0:
        cmd = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=str(home))


@pytest.fixture
def shared_tmp():
    """A folder another user can read (pytest's tmp_path is 0700 under root)."""
    import shutil
    import tempfile
    base = Path(tempfile.gettempdir())
    if not all(p.stat().st_mode & 0o001 for p in [base, *base.parents]):
        base = Path("/tmp")  # TMPDIR is private (CI's is 0700): the other user could not reach it
    d = Path(tempfile.mkdtemp(prefix="fuzzcomp-ro-", dir=base))
    d.chmod(0o755)
    home = d / "home"
    home.mkdir()
    home.chmod(0o777)
    yield d, home
    for p in d.rglob("*"):
        if p.is_dir():
            p.chmod(0o755)
    shutil.rmtree(d)


def test_report_on_a_read_only_folder_prints_the_summary_then_one_line(shared_tmp):
    d, home = shared_tmp
    c = _campaign(d / "c", CASES)
    for p in [c, *c.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    c.chmod(0o555)
    p = _as_other_user(["report", c], home)
    assert p.returncode == exitcodes.HARNESS, (p.stdout, p.stderr)
    assert "cases 3" in p.stdout
    assert "cannot write the summary" in _err_line(p) and len(p.stderr.strip().splitlines()) == 1


def test_minimize_in_a_read_only_finding_is_one_line(shared_tmp):
    d, home = shared_tmp
    c = _campaign(d / "c", CASES, {"0000000003-s1": "{}"})
    for p in [c, *c.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    p = _as_other_user(["minimize", c / "findings" / "0000000003-s1"], home)
    assert p.returncode == exitcodes.HARNESS and "is not writable" in _err_line(p)


def test_bench_json_in_a_read_only_folder_is_refused_up_front(shared_tmp):
    d, home = shared_tmp
    ro = d / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    p = _as_other_user(["bench", "--seeds", "1", "--backend", "eager", "--json", ro / "b.json"], home)
    assert p.returncode == exitcodes.USAGE and "is not writable" in _err_line(p)


def test_files_are_written_world_readable(tmp_path):
    from fuzzcomp.findings.store import write_atomic
    write_atomic(tmp_path / "x.json", "{}")
    assert (tmp_path / "x.json").stat().st_mode & 0o777 == 0o644 & ~_umask()


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_unknown_finding_id_says_where_it_looked(cli, tmp_path):
    p = cli("replay", "1234567890-s7", "--campaign", tmp_path, env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path)))
    assert p.returncode == exitcodes.USAGE and "no finding 1234567890-s7 in --campaign" in _err_line(p)


def test_bisect_refuses_what_it_cannot_split(cli, tmp_path):
    p = cli("bisect", tmp_path / "none.py")
    assert p.returncode == exitcodes.USAGE
    bad = tmp_path / "broken.py"
    bad.write_text("def f(:\n")
    p = cli("bisect", bad)
    assert p.returncode == exitcodes.HARNESS and "not valid Python" in _err_line(p)
