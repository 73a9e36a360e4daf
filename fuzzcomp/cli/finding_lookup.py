"""What a user types after ``replay``/``show``/``minimize``/``bisect``: a seed, a finding id, a path.

Contract: ``find_finding(text, campaign=None)`` turns a finding id as ``fuzzcomp
run`` prints it (``6113171325-s1``), a finding folder or its ``finding.json``
into the finding folder, or raises ``UsageError`` with one line naming where it
looked. An id is looked up in ``--campaign DIR``, then in the campaigns this
user ran most recently (``remember_campaign`` keeps their folders in
``$XDG_CACHE_HOME/fuzzcomp/campaigns``), then under ``./reports``. Nothing here
imports torch.

``run_repro_file(path)`` runs a standalone repro and maps its outcome onto the
shared exit codes: 0 fixed, 1 the bug shows (exit 1 *and* a ``BUG:`` line), 3
for everything else (a syntax error, an import that fails, a CUDA repro on a
machine without CUDA, an uncaught exception): a broken repro is never reported
as the bug.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

from fuzzcomp.base import exitcodes
from fuzzcomp.base.errors import UsageError
from fuzzcomp.base.repro_runner import run_repro_file as run_repro

FINDING_ID = re.compile(r"^\d{6,}-s\d+(-\d+)?$")
_KEEP = 20


def _registry() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fuzzcomp" / "campaigns"


def remember_campaign(folder: str) -> None:
    """Note a campaign folder so that its finding ids resolve from anywhere later (best effort).

    The file holds one path a line as bytes (``os.fsencode``: any byte a path may hold survives)
    and is replaced atomically, so a crash or a path that cannot be encoded never empties it."""
    path = _registry()
    here = os.fsencode(os.path.realpath(os.fsdecode(folder)))
    try:
        old = [ln for ln in path.read_bytes().splitlines() if ln and ln != here] if path.exists() else []
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".campaigns-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(b"\n".join(([here] + old)[:_KEEP]) + b"\n")
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # a read-only home must not stop a campaign; ids then resolve via --campaign


def recent_campaigns() -> list[Path]:
    try:
        return [Path(os.fsdecode(ln)) for ln in _registry().read_bytes().splitlines() if ln.strip()]
    except OSError:
        return []


def find_finding(text: str, campaign: str | None = None) -> Path:
    path = Path(text)
    if path.name == "finding.json":
        path = path.parent
    if path.is_dir():
        if not (path / "finding.json").is_file():
            raise UsageError(f"{text} is not a finding folder (no finding.json)")
        return path
    if path.is_file():
        raise UsageError(f"{text} is neither a fuzzcomp repro (.py) nor a finding (a finding folder or its "
                         "finding.json)")
    if not FINDING_ID.match(text):
        raise UsageError(f"no such file or folder: {text} (give a finding id as `fuzzcomp run` prints it, "
                         "a finding folder or its finding.json)")
    places = [Path(campaign)] if campaign else []
    places += recent_campaigns()
    reports = Path("reports")
    if reports.is_dir():
        places += sorted((p for p in reports.iterdir() if p.is_dir()), reverse=True)
    places.append(Path("."))
    for root in places:
        hit = root / "findings" / text
        if (hit / "finding.json").is_file():
            return hit
    where = f"--campaign {campaign}" if campaign else "recent campaigns and ./reports"
    raise UsageError(f"no finding {text} in {where}: pass --campaign DIR (the run's --out folder)")


def needs_cuda(source: str) -> bool:
    return re.search(r"^DEVICE = ['\"]cuda", source, re.M) is not None or \
        re.search(r"^# fuzzcomp-corpus:.*\bdevice=cuda\b", source, re.M) is not None


def cuda_usable() -> bool:
    try:
        import torch
        return bool(torch.cuda.is_available())
    except Exception:  # a torch that cannot even import is no CUDA either
        return False


def check_repro_file(path: Path) -> tuple[int, str] | None:
    """Why this repro cannot run here, before running it: (exit code, one line), or None."""
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        return exitcodes.USAGE, f"cannot read {path}: {e}"
    try:
        compile(source, str(path), "exec")
    except SyntaxError as e:
        return exitcodes.HARNESS, f"{path} is not valid Python (line {e.lineno}: {e.msg}): the repro is broken"
    if needs_cuda(source) and not cuda_usable():
        return exitcodes.HARNESS, f"{path} is a CUDA repro and this machine has no usable CUDA device: " \
                                  "it cannot run here"
    return None


def run_repro_file(path: Path, env: dict | None = None, timeout_s: float | None = None) -> tuple[int, str]:
    """Run a repro in a fresh interpreter: (exit code per the shared table, its last line)."""
    early = check_repro_file(path)
    if early:
        return early
    run = run_repro(path, timeout_s, env=env, cwd=os.getcwd())
    if run.code is None:
        if run.why and run.why.startswith("timed out"):
            return exitcodes.HARNESS, f"{path} ran past {timeout_s:g} s"
        return exitcodes.HARNESS, f"the repro itself failed ({run.why})"
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    out = run.stdout.strip().splitlines()
    bug = [ln for ln in out if ln.startswith("BUG:")]
    if run.code == 0:
        return exitcodes.CLEAN, (out or ["exit 0"])[-1]
    if run.code == 1 and bug:
        return exitcodes.BUG, bug[-1]
    err = run.stderr.strip().splitlines()
    last = (err or out or [f"exit {run.code}"])[-1]
    if "No module named" in last:
        last += " (is the backend's module on PYTHONPATH?)"
    return exitcodes.HARNESS, f"the repro itself failed (exit {run.code}, no BUG line): {last[:300]}"
