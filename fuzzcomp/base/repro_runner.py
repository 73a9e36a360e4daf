"""The one way fuzzcomp runs a repro file: a fresh interpreter, in its own session, with a timeout.

Contract: ``run_repro_file(path, timeout_s, ...)`` runs ``python path`` and returns a
``ReproRun``: the exit code (None when it timed out, was stopped or could not start, and then
``why`` says which), its whole stdout and stderr, and the seconds it took. It never raises for
what the file does. The child runs in a new session, so a terminal's Ctrl-C reaches only us; on
a timeout, a stop (``should_stop()`` polled twice a second) or our own interruption the whole
process group (the repro and the C++ compilers it started) is killed. ``log_to`` keeps the run's
output beside the repro. ``last_line(run)`` is the line a caller reports: the last ``BUG:`` line,
else the last line of stdout, else of stderr.

Every caller (the campaign's fresh-process check, ``replay``/``bisect``/``promote``, ``recheck``,
the source reducer's interestingness test) runs files through here and keeps only its own
reading of the result. ``corpus/conftest.py`` keeps a standalone copy (it is copied into other
folders and needs only pytest); ``tests/test_repro_runner.py`` proves the two agree.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ReproRun:
    code: int | None
    stdout: str = ""
    stderr: str = ""
    why: str | None = None
    seconds: float = 0.0

    @property
    def bug_lines(self) -> list[str]:
        return [ln for ln in self.stdout.splitlines() if ln.startswith("BUG:")]


def last_line(run: ReproRun, limit: int = 300) -> str:
    """The last BUG line, else the last line of stdout, else of stderr (cut to ``limit``)."""
    tail = run.bug_lines or run.stdout.splitlines() or run.stderr.splitlines() or [""]
    return tail[-1][:limit]


def _kill_group(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)  # the repro and the C++ compilers it started
    except (ProcessLookupError, PermissionError):
        p.kill()
    p.wait()


def run_repro_file(path, timeout_s: float | None = None, *, python: str = sys.executable,
                   cwd=None, env: dict | None = None, search_path=None, should_stop=None,
                   log_to=None) -> ReproRun:
    """Run ``python path`` (see the module doc). ``cwd`` defaults to the file's own folder;
    ``search_path`` goes first on PYTHONPATH (a custom backend module beside a user's file)."""
    path = Path(path).resolve()  # it runs from its own folder: a relative path would not resolve there
    env = dict(os.environ if env is None else env)
    if search_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(search_path), env.get("PYTHONPATH")]))
    t0 = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        try:
            p = subprocess.Popen([python, str(path)], stdout=out, stderr=err, text=True, env=env,
                                 cwd=str(cwd or search_path or path.parent),
                                 start_new_session=True)  # a terminal's Ctrl-C must not fake "not reproduced"
        except OSError as e:
            return ReproRun(None, why=f"could not start {python}: {e.strerror or e}")
        end = None if timeout_s is None else t0 + timeout_s
        why = None
        try:
            while p.poll() is None:
                if end is not None and time.monotonic() >= end:
                    why = f"timed out after {timeout_s:g} s"
                elif should_stop is not None and should_stop():
                    why = "stopped: the campaign is ending"
                if why:
                    _kill_group(p)
                    return ReproRun(None, why=why, seconds=time.monotonic() - t0)
                try:
                    p.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    pass
        except BaseException:  # interrupted ourselves: the repro must not outlive us
            _kill_group(p)
            raise
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if log_to is not None:
        Path(log_to).write_text(f"$ python {path.name}\n{stdout}{stderr}exit {p.returncode}\n")
    return ReproRun(p.returncode, stdout, stderr, None, time.monotonic() - t0)
