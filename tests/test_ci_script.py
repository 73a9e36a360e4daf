"""Every pytest command in .ci/run parses under the project's pytest options.

CI once failed after 50 minutes because its Ray step turned xdist off (-p no:xdist) while
pyproject's addopts passed --dist, an xdist option: "unrecognized arguments: --dist". Each
command here is run with --collect-only on one small file, which reaches option parsing in
about 2 s; a usage error is exit 4."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = "tests/test_layout.py"


def _pytest_commands(script: str) -> list[list[str]]:
    """The argument lists after ``python -m pytest`` in a bash script, continuation lines joined,
    quoted variables replaced by the small test file (they name test files or folders)."""
    joined = re.sub(r"\\\n\s*", " ", script)
    commands = []
    for line in joined.splitlines():
        if line.lstrip().startswith("#") or "python -m pytest" not in line:
            continue
        args = shlex.split(line.split("python -m pytest", 1)[1])
        commands.append([re.sub(r"\$\{?\w+\}?", SMALL, a) for a in args])
    return commands


def test_every_pytest_command_in_ci_parses_under_the_addopts():
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        commands = _pytest_commands(f.read())
    assert len(commands) >= 3, commands  # default, slow, Ray
    for args in commands:
        if "-n" in args:  # one worker is enough to parse; -n 0 runs in this process
            args[args.index("-n") + 1] = "0"
        r = subprocess.run([sys.executable, "-m", "pytest", *args, "--collect-only", "-q", SMALL],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
        # 5: the file's tests were deselected (-m slow); 4 is a usage error
        assert r.returncode in (0, 5), (args, r.stdout[-800:], r.stderr[-800:])


def test_the_check_catches_an_option_that_needs_a_plugin_turned_off():
    """The regression itself: --dist (from addopts) with xdist off is a usage error."""
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "--collect-only", "-q", SMALL],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 4 and "--dist" in r.stderr
