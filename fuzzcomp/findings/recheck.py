"""``fuzzcomp recheck DIR --python PATH``: does each bucket still fail under another torch?

Contract: ``recheck(folder, python, timeout_s, jobs)`` runs, for every bucket
of the campaign folder, one finding's ``repro.py`` (a confirmed one first,
then a minimised one, then the earliest) in a fresh process of the given
interpreter (a venv with torch nightly, say), from the finding's own folder.
Each bucket gets a status from the repro's exit code, the repro files' own
contract: ``fixed`` (0), ``still-shows`` (1 with its ``BUG:`` line: Python
itself exits 1 on an uncaught exception), ``broken`` (anything else: the repro
cannot run there, or it timed out). Results go to disk before the
command returns: ``findings/<id>/recheck.json`` and ``DIR/recheck.json``,
each keyed by interpreter path, so reports can show several interpreters side
by side. A bucket the known-bug registry claims gets ``registry``: whether the
registry's ``fixed_in`` and this answer agree, and the ``fuzzcomp link`` that
records a fix where they do not. ``interpreter_version(python)`` says which torch that interpreter has
(None when it cannot import torch). The command's exit code: 1 when some bucket
still shows, 0 when none does, 3 when the interpreter cannot run at all.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fuzzcomp.base.exitcodes import BUG, CLEAN, HARNESS
from fuzzcomp.base.repro_runner import run_repro_file
from fuzzcomp.findings.known import agreement, case_identity, default_registry
from fuzzcomp.findings.store import StoreError, load_finding
from fuzzcomp.findings.triage import BucketKey

STATUS = {0: "fixed", 1: "still-shows"}


class RecheckError(Exception):
    """The folder or interpreter cannot be used (a usage error)."""


def interpreter_version(python: str, timeout_s: float = 120.0) -> str | None:
    """torch.__version__ under ``python``; None when it has no torch or cannot start."""
    try:
        p = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                           text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip() else None


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def _slug(bucket: dict) -> str:
    return BucketKey.from_json(bucket).slug()


def buckets(folder: Path) -> dict[str, Path]:
    """{bucket slug: the finding folder whose repro.py stands for it}."""
    best: dict[str, tuple] = {}
    root = folder / "findings"
    for d in sorted(root.iterdir()) if root.is_dir() else ():
        finding = _read(d / "finding.json")
        if "bucket" not in finding or not (d / "repro.py").exists():
            continue
        status = _read(d / "status.json")
        rank = (status.get("confirmed") is not True, not (d / "minimized.json").exists(), d.name)
        slug = status.get("bucket") or _slug(finding["bucket"])
        if slug not in best or rank < best[slug][0]:
            best[slug] = (rank, d)
    return {slug: d for slug, (_, d) in sorted(best.items())}


def run_repro(python: str, repro: Path, timeout_s: float) -> dict:
    """Run one repro under ``python`` from its own folder: exit code, status, last line, seconds."""
    t0 = time.monotonic()
    run = run_repro_file(repro, timeout_s, python=python, cwd=repro.parent)
    code, out, err = run.code, run.stdout, (run.why if run.code is None else run.stderr)
    lines = out.splitlines()
    bugs = [ln for ln in lines if ln.startswith("BUG:")]
    last = (bugs or lines or err.strip().splitlines() or [""])[-1][:300]
    status = STATUS.get(code, "broken")
    if status == "still-shows" and not bugs:  # a traceback, not the repro's verdict
        status = "broken"
    return {"exit": code, "status": status, "last_line": last,
            "seconds": round(time.monotonic() - t0, 1)}


def _registry_entry(d: Path):
    """The registry entry for the finding in folder ``d``, whatever torch it names as fixed."""
    try:
        data = load_finding(d / "finding.json")
    except StoreError:
        return None
    m = default_registry().match(case_identity(data["bucket_obj"], data["case_obj"]))
    return m.bug if m is not None else None


def _merge(path: Path, python: str, record: dict) -> None:
    data = _read(path)
    data.setdefault("runs", {})[python] = record
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)


def recheck(folder, python: str, timeout_s: float = 600.0, jobs: int = 1, progress=None) -> dict:
    """Re-run every bucket's repro under ``python``; returns {"torch", "python", "buckets": {...}}."""
    folder = Path(folder)
    if not (folder / "findings").is_dir():
        raise RecheckError(f"{folder} is not a fuzzcomp campaign folder (no findings/)")
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise RecheckError(f"not an executable interpreter: {python}")
    version = interpreter_version(python)
    chosen = buckets(folder)

    def one(item):
        slug, d = item
        rec = {"bucket": slug, "finding": d.name, "python": python, "torch": version,
               "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               **run_repro(python, d / "repro.py", timeout_s)}
        bug = _registry_entry(d)
        if bug is not None:   # the registry and the recheck must agree on "fixed"
            rec["registry"] = agreement(bug, rec["status"], version, slug)
        _merge(d / "recheck.json", python, rec)   # on disk at once: nothing is lost to a later stop
        if progress is not None:
            progress(rec)
        return slug, rec

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = dict(pool.map(one, chosen.items()))
    summary = {"python": python, "torch": version, "buckets": results,
               "counts": {s: sum(r["status"] == s for r in results.values())
                          for s in ("fixed", "still-shows", "broken")}}
    _merge(folder / "recheck.json", python, summary)
    return summary


def exit_code(summary: dict) -> int:
    if summary["torch"] is None and summary["buckets"]:
        return HARNESS
    return BUG if summary["counts"]["still-shows"] else CLEAN


def render(summary: dict) -> str:
    lines = [f"recheck under {summary['python']} (torch {summary['torch'] or 'not importable'})"]
    for slug, r in summary["buckets"].items():
        lines.append(f"  {r['status']:<11} {slug}  ({r['finding']}, exit {r['exit']}): {r['last_line'][:100]}")
        reg = r.get("registry")
        if reg:
            lines.append(f"      known bug {reg['id']}: " + (reg["hint"] if not reg["agrees"] else
                         "the registry agrees" + (f" (fixed in {reg['fixed_in']})" if reg["fixed_in"] else "")))
    c = summary["counts"]
    lines.append(f"{len(summary['buckets'])} buckets: {c['fixed']} fixed, {c['still-shows']} still show, "
                 f"{c['broken']} broken")
    return "\n".join(lines)
