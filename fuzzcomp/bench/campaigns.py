"""Benchmarks that run the real campaign: bucket yield and recall on planted faults.

Contract: both functions start ``python -m fuzzcomp run ...`` as a subprocess
(the exact path a user takes) and read only what the campaign leaves on disk:
``summary.json`` (cases, valid_rate, wall_s, phase_s, buckets) and
``events.jsonl`` (the "start", "case" and "finding" events with their times).
They return plain dicts and never raise for a campaign that fails: its exit
code and last stderr line are reported instead.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

#: Planted backends (fuzzcomp.planted) and the case count each gets at most;
#: hang and abort cost a case timeout per case, so they get two.
PLANTED = ("perturb_add", "perturb_mul", "drop_mutation_noncontiguous", "stale_result",
           "crash_on_symbolic", "runtime_crash", "inductor_relu_bug", "hang", "abort")
SLOW_PLANTED = {"hang": 2, "abort": 2}
HANG_TIMEOUT_S = 15.0


def _run(args: list[str], timeout_s: float) -> tuple[int, str, float]:
    cmd = [sys.executable, "-m", "fuzzcomp", "run", "--quiet", "--no-minimize", *args]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        code, err = p.returncode, (p.stderr.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        code, err = 124, f"no exit within {timeout_s:.0f} s"
    if code == 1:  # `fuzzcomp run` exits 1 when it has findings: the campaign itself went fine
        err = ""
    return code, err, time.perf_counter() - t0


def _events(out: Path) -> list[dict]:
    path = out / "events.jsonl"
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events


def _summary(out: Path) -> dict:
    try:
        return json.loads((out / "summary.json").read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def campaign(opts, workdir: str) -> dict:
    """A short time-boxed campaign: distinct buckets per hour on the real backend."""
    out = Path(workdir) / f"campaign-{opts.campaign_backend.replace(':', '_')}"
    args = ["--minutes", str(opts.campaign_minutes), "--backend", opts.campaign_backend,
            "--jobs", str(opts.campaign_jobs), "--out", str(out), "--case-timeout", str(opts.case_timeout_s)]
    code, err, elapsed = _run(args, opts.campaign_minutes * 60 + 300)
    s = _summary(out)
    wall = float(s.get("wall_s") or 0.0)
    buckets = s.get("buckets") or {}
    return {
        "backend": opts.campaign_backend, "jobs": opts.campaign_jobs, "out": str(out),
        "command": "fuzzcomp run --quiet --no-minimize " + " ".join(args),
        "exit_code": code, "stderr_tail": err if code else "", "process_s": round(elapsed, 1),
        "cases": s.get("cases"), "valid_rate": s.get("valid_rate"), "wall_s": wall,
        "phase_s": s.get("phase_s"), "findings": s.get("findings"), "buckets": len(buckets),
        "bucket_slugs": sorted(buckets),
        "cases_per_hour_per_core": round(s.get("cases", 0) / wall * 3600 / opts.campaign_jobs, 1) if wall else 0.0,
        "buckets_per_hour": round(len(buckets) / wall * 3600, 1) if wall else 0.0,
    }


def first_detection(events: list[dict]) -> dict:
    """Seconds from the "start" event to the first "finding", and cases run by then."""
    start = next((e["t"] for e in events if e.get("event") == "start"), None)
    cases = 0
    for e in events:
        if e.get("event") == "case":
            cases += 1
        elif e.get("event") == "finding" and start is not None:
            return {"detected": True, "first_finding_s": round(e["t"] - start, 1),
                    "cases_to_detect": cases + 1, "first_symptom": f"{e.get('symptom')}/{e.get('stage')}"}
    return {"detected": False, "first_finding_s": None, "cases_to_detect": None, "first_symptom": None}


def recall(opts, workdir: str, say=lambda msg: None) -> dict:
    """One campaign per planted backend; time to its first finding."""
    results = {}
    for name in opts.recall:
        cases = min(opts.recall_cases, SLOW_PLANTED.get(name, opts.recall_cases))
        timeout = HANG_TIMEOUT_S if name in SLOW_PLANTED else opts.case_timeout_s
        out = Path(workdir) / f"recall-{name}"
        # -x: the campaign stops at its first finding, which is all recall measures
        args = ["--cases", str(cases), "-x", "--backend", f"fuzzcomp.planted:{name}", "--jobs", "1",
                "--out", str(out), "--case-timeout", str(timeout)]
        code, err, elapsed = _run(args, cases * (timeout + 30) + 120)
        events = _events(out)
        s = _summary(out)
        row = {"command": "fuzzcomp run --quiet --no-minimize " + " ".join(args), "exit_code": code,
               "stderr_tail": err if code else "", "process_s": round(elapsed, 1),
               "cases": sum(1 for e in events if e.get("event") == "case"),
               "buckets": len(s.get("buckets") or {}), **first_detection(events)}
        results[name] = row
        say(f"  {name}: detected={row['detected']} after {row['first_finding_s']} s "
            f"({row['cases_to_detect']} cases)")
    return results


def parse_planted(text: str) -> tuple:
    """``all`` or a comma list of names from ``PLANTED``; raises ValueError naming a bad one."""
    if text in ("all", ""):
        return PLANTED
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    bad = [n for n in names if n not in PLANTED]
    if bad:
        raise ValueError(f"unknown planted backend {bad[0]!r}; choose from {', '.join(PLANTED)} or 'all'")
    return names


__all__ = ["PLANTED", "campaign", "recall", "first_detection", "parse_planted"]
