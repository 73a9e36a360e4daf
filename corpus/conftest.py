"""pytest plugin for the regression corpus: every repro file is one test, run in its own interpreter.

Run it with ``pytest -n auto corpus/`` from the repository root. Each ``*.py``
file here (other than this one) is collected by ``pytest_collect_file`` as a
single item that runs ``python FILE`` in a fresh subprocess, so repros never
share torch state, a crashing repro cannot take the session down, and the
suite is safe under pytest-xdist. A repro exits 1 (and prints ``BUG: ...``)
while its bug shows, 0 once it is fixed.

The file's metadata line (written by ``fuzzcomp promote``)::

    # fuzzcomp-corpus: status=open torch>=2.13.0 bucket=SLUG dedup=KEY symptom=S device=cpu issue=URL

decides what a pass means:

* ``status=open`` and the running torch inside the ``torch`` range: a
  **strict xfail**. The bug showing is the expected failure; the file
  passing (XPASS) fails the run with a message saying the bug looks fixed
  upstream and how to move the file.
* ``status=fixed``, or a torch outside the range: the file must pass; the
  bug showing again is a failure (a regression, or a range to widen).
* ``verified=no`` on an open bug: a plain (non-strict) xfail. The repro was written by hand
  from a campaign's finding and has not yet been seen to fail on its device: its XPASS says the
  form misses the bug, and does not fail the run.
* ``device=cuda`` where no CUDA device is usable: skipped, with the reason.
* any other exit (a harness crash, a timeout) is a plain failure, never an
  xfail.

One more item, ``conftest.py::corpus-self-test``, proves the machinery on two
throwaway scripts (one shows a bug, one does not), so the run is never empty
and a broken plugin cannot look green. This file imports only pytest and the
standard library (it does not need fuzzcomp); its header parser mirrors
``fuzzcomp.findings.corpus.parse_meta``.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PREFIX = "# fuzzcomp-corpus:"
DEFAULT_TIMEOUT_S = 900


class BugShows(AssertionError):
    """The repro printed its BUG line: what a strict xfail expects from an open bug."""


# ---- metadata ------------------------------------------------------------------------------------
def parse_meta(text: str) -> dict | None:
    for line in text.splitlines()[:5]:
        if line.startswith(PREFIX):
            meta = {}
            for token in line[len(PREFIX):].split():
                m = re.match(r"^torch([<>=!].*)$", token)
                if m:
                    meta["torch"] = m.group(1)
                elif "=" in token:
                    k, _, v = token.partition("=")
                    meta[k] = v
            return meta
    return None


def _release(version: str) -> tuple:
    return tuple(int(x) for x in re.match(r"\d+(\.\d+)*", version.strip()).group(0).split("."))


def affected(spec: str | None, version: str) -> bool:
    if not spec:
        return True
    ops = {"<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__", "==": "__eq__", "!=": "__ne__"}
    have = _release(version)
    for clause in spec.split(","):
        op, want = re.match(r"\s*(<=|>=|==|!=|<|>)\s*(\S+)", clause).groups()
        want = _release(want)
        n = max(len(have), len(want))
        if not getattr(have + (0,) * (n - len(have)), ops[op])(want + (0,) * (n - len(want))):
            return False
    return True


def torch_version() -> str:
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "0"


def cuda_available() -> bool:
    code = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


# ---- the decision, pure ------------------------------------------------------------------------------
def expectation(meta: dict, version: str) -> str:
    """'bug' when this torch should show the bug (strict xfail), 'fixed' when it must pass."""
    if meta.get("status", "open") == "open" and affected(meta.get("torch"), version):
        return "bug"
    return "fixed"


def strict_xfail(meta: dict) -> bool:
    """An expected bug passing fails the run, unless the repro is ``verified=no``: written by hand
    from a campaign's finding and not yet seen failing on its device."""
    return meta.get("verified") != "no"


def outcome(meta: dict, code: int | None, line: str) -> str:
    """'bug-shows', 'passes' or 'harness-error' for one finished run.

    Exit 1 counts as the bug only with the repro's own ``BUG:`` line: an uncaught
    exception also exits 1, and that is a broken repro, not the bug.
    """
    symptom = meta.get("symptom", "")
    if code == 1 and line.startswith("BUG:") or (symptom == "segfault" and code is not None and code < 0) or \
            (symptom == "hang" and code is None):
        return "bug-shows"
    return "passes" if code == 0 else "harness-error"


def run_repro(path: Path, timeout_s: float) -> tuple[int | None, str]:
    try:
        p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                           timeout=timeout_s, cwd=str(path.parent))
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout_s:g} s"
    lines = p.stdout.strip().splitlines() or p.stderr.strip().splitlines() or [""]
    bug = [ln for ln in lines if ln.startswith("BUG:")]
    return p.returncode, (bug or lines)[-1][:400]


# ---- collection ----------------------------------------------------------------------------------
def pytest_collect_file(parent, file_path):
    path = Path(file_path)
    if path.parent != HERE or path.suffix != ".py":
        return None
    if path.name == "conftest.py":
        return SelfTestFile.from_parent(parent, path=path)
    return CorpusFile.from_parent(parent, path=path)


class CorpusFile(pytest.File):
    def collect(self):
        meta = parse_meta(self.path.read_text(errors="replace"))
        yield CorpusItem.from_parent(self, name=self.path.stem, meta=meta)


class CorpusItem(pytest.Item):
    def __init__(self, *, meta: dict | None, **kwargs):
        super().__init__(**kwargs)
        self.meta = meta
        self.version = torch_version()
        if meta is not None and expectation(meta, self.version) == "bug":
            fix = (f"it passes on torch {self.version}: the bug looks fixed upstream. Set "
                   f"status=fixed (and narrow torch{meta.get('torch', '')} to the versions it "
                   f"affected) in its '# fuzzcomp-corpus:' line, or move it to corpus/fixed/")
            strict = strict_xfail(meta)
            why = f"if {fix}" if strict else ("unverified repro: an XPASS means this form misses the bug "
                                              "(or it is fixed); once it shows, drop verified=no")
            self.add_marker(pytest.mark.xfail(strict=strict, raises=BugShows,
                                              reason=f"open bug {meta.get('issue', 'none')}; {why}"))

    def runtest(self):
        if self.meta is None:
            pytest.fail(f"{self.path.name} has no '{PREFIX}' line: add one with `fuzzcomp promote`, "
                        "or move the file out of corpus/", pytrace=False)
        if self.meta.get("device") == "cuda" and not cuda_available():
            pytest.skip("CUDA-only repro: no usable CUDA device here")
        timeout = float(self.meta.get("timeout", DEFAULT_TIMEOUT_S))
        code, line = run_repro(self.path, timeout)
        result = outcome(self.meta, code, line)
        if result == "harness-error":
            pytest.fail(f"the repro itself failed (exit {code}): {line}", pytrace=False)
        if result == "bug-shows":
            if expectation(self.meta, self.version) == "bug":
                raise BugShows(line)
            pytest.fail(f"the bug shows on torch {self.version}, which the header says is not "
                        f"affected (status={self.meta.get('status')} torch{self.meta.get('torch', '')}): "
                        f"a regression, or a range to widen. {line}", pytrace=False)

    def repr_failure(self, excinfo):
        return str(excinfo.value)

    def reportinfo(self):
        return self.path, None, f"corpus: {self.path.name}"


# ---- the self-test: the machinery on two throwaway scripts -------------------------------------------
class SelfTestFile(pytest.File):
    def collect(self):
        yield SelfTestItem.from_parent(self, name="corpus-self-test")


_SCRIPTS = {"shows": 'print("BUG: call 0, output[0]: planted for the self-test")\nraise SystemExit(1)\n',
            "fixed": 'print("OK: compiled matches eager on every call")\nraise SystemExit(0)\n',
            "broken": 'raise RuntimeError("harness bug")\n',
            "cannot": 'print("cannot run here: no CUDA device")\nraise SystemExit(3)\n',
            "no-env": 'print("BUG: looks like a bug but the repro says it cannot run here")\nraise SystemExit(3)\n'}


class SelfTestItem(pytest.Item):
    def runtest(self):
        v = "2.13.0+cpu"
        with tempfile.TemporaryDirectory(prefix="fuzzcomp-corpus-selftest-") as tmp:
            runs = {}
            for name, body in _SCRIPTS.items():
                path = Path(tmp) / f"{name}.py"
                path.write_text(f"{PREFIX} status=open torch>=2.13\n{body}")
                assert parse_meta(path.read_text()) == {"status": "open", "torch": ">=2.13"}
                runs[name] = run_repro(path, 60)
        meta = {"status": "open", "torch": ">=2.13"}
        assert outcome(meta, *runs["shows"]) == "bug-shows", runs["shows"]
        assert outcome(meta, *runs["fixed"]) == "passes", runs["fixed"]
        assert outcome(meta, *runs["broken"]) == "harness-error", runs["broken"]  # exit 1, no BUG line
        assert outcome(meta, *runs["cannot"]) == "harness-error", runs["cannot"]  # exit 3: never an xfail
        assert outcome(meta, *runs["no-env"]) == "harness-error", runs["no-env"]  # exit 3: never an xfail
        assert expectation(meta, v) == "bug"                          # strict xfail here
        assert expectation(meta, "2.14.0") == "bug"                   # open-ended range
        assert expectation({"status": "open", "torch": "<2.13"}, v) == "fixed"
        assert expectation({"status": "fixed", "torch": ">=2.11"}, v) == "fixed"
        assert strict_xfail(meta) and not strict_xfail({**meta, "verified": "no"})
        assert affected(">=2.11,<2.14", v) and not affected(">=2.11,<2.13", v)
        assert outcome({"symptom": "segfault"}, -11, "") == "bug-shows"
        assert outcome({"symptom": "numeric"}, -11, "") == "harness-error"
        assert outcome({"symptom": "hang"}, None, "timed out") == "bug-shows"

    def reportinfo(self):
        return self.path, None, "corpus: machinery self-test"
