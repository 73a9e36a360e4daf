"""``fuzzcomp recheck DIR --python PATH``: every bucket's repro re-run under another interpreter,
marked fixed / still-shows / broken and written to disk."""
import json
import os
import stat
import sys
from pathlib import Path

from fuzzcomp.cli.parser import main
from fuzzcomp.findings.recheck import buckets, recheck

# a repro that fails unless the interpreter is "the fixed torch" (the wrapper sets FIXED_TORCH)
STILL_UNLESS_FIXED = ("import os, sys\nif os.environ.get('FIXED_TORCH'):\n    sys.exit(0)\n"
                      "print('BUG: output 0 differs by 0.5')\nsys.exit(1)\n")
ALWAYS = "print('BUG: compiled raised KeyError')\nraise SystemExit(1)\n"
BROKEN = "import no_such_module_anywhere\n"


def _finding(root: Path, fid: str, symptom: str, sig: str, repro: str, confirmed=None, slug=None):
    d = root / "findings" / fid
    d.mkdir(parents=True)
    (d / "finding.json").write_text(json.dumps({"id": fid, "bucket": {"symptom": symptom, "stage": "inductor",
                                                                       "signature": sig}}))
    (d / "repro.py").write_text(repro)
    if confirmed is not None:
        (d / "status.json").write_text(json.dumps({"bucket": slug, "confirmed": confirmed}))
    return d


def _campaign(tmp_path):
    root = tmp_path / "camp"
    _finding(root, "001-s1", "numeric", "output values | culprit op: mul", STILL_UNLESS_FIXED)
    _finding(root, "002-s2", "compile-crash", "KeyError: 'NAME'", ALWAYS)
    _finding(root, "003-s3", "compile-crash", "KeyError: 'NAME'", BROKEN)   # same bucket as 002
    _finding(root, "004-s4", "runtime-crash", "RuntimeError: x", BROKEN)
    return root


def _fake_python(tmp_path, fixed: bool) -> str:
    """Another interpreter: a wrapper script around this one (FIXED_TORCH set or not)."""
    path = tmp_path / ("fixed-python" if fixed else "same-python")
    env = "FIXED_TORCH=1 " if fixed else ""
    path.write_text(f"#!/bin/sh\n{env}exec {sys.executable} \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_one_repro_per_bucket_confirmed_first(tmp_path):
    root = _campaign(tmp_path)
    chosen = buckets(root)
    assert len(chosen) == 3
    assert sorted(d.name for d in chosen.values()) == ["001-s1", "002-s2", "004-s4"]


def test_recheck_marks_fixed_still_and_broken_and_writes_it(tmp_path):
    root = _campaign(tmp_path)
    same = recheck(root, _fake_python(tmp_path, False), timeout_s=60)
    fixed = recheck(root, _fake_python(tmp_path, True), timeout_s=60)
    by = {r["finding"]: r["status"] for r in same["buckets"].values()}
    assert by == {"001-s1": "still-shows", "002-s2": "still-shows", "004-s4": "broken"}
    by = {r["finding"]: r["status"] for r in fixed["buckets"].values()}
    assert by == {"001-s1": "fixed", "002-s2": "still-shows", "004-s4": "broken"}
    assert fixed["counts"] == {"fixed": 1, "still-shows": 1, "broken": 1}
    # on disk, one record per interpreter, beside each finding and for the campaign
    per = json.loads((root / "findings" / "001-s1" / "recheck.json").read_text())["runs"]
    assert {r["status"] for r in per.values()} == {"fixed", "still-shows"} and len(per) == 2
    top = json.loads((root / "recheck.json").read_text())["runs"]
    assert set(top) == {_fake_python(tmp_path, False), _fake_python(tmp_path, True)}
    assert per[_fake_python(tmp_path, True)]["torch"]  # the interpreter's torch is recorded


def test_cli_exit_codes(tmp_path, capsys):
    root = _campaign(tmp_path)
    assert main(["recheck", str(root), "--python", _fake_python(tmp_path, True), "--timeout", "60"]) == 1
    out = capsys.readouterr().out
    assert "fixed" in out and "still-shows" in out and "3 buckets: 1 fixed, 1 still show, 1 broken" in out
    assert main(["recheck", str(tmp_path / "nope"), "--python", sys.executable]) == 2
    assert main(["recheck", str(root), "--python", str(tmp_path / "no-python")]) == 2
    only_fixed = tmp_path / "c2"
    _finding(only_fixed, "001-s1", "numeric", "v", STILL_UNLESS_FIXED)
    assert main(["recheck", str(only_fixed), "--python", _fake_python(tmp_path, True)]) == 0
    dead = tmp_path / "dead-python"
    dead.write_text("#!/bin/sh\nexit 7\n")
    dead.chmod(0o755)
    assert main(["recheck", str(only_fixed), "--python", str(dead)]) == 3
    assert os.path.exists(only_fixed / "findings" / "001-s1" / "recheck.json")
