"""Blind against guided generation (``--feedback off`` vs ``on``), side by side in one run.

Run with the fuzzcomp venv's python on an otherwise idle machine:

    python benchmarks/guided_vs_blind.py --minutes 30 --out /tmp/gvb

Both arms start at the same moment and run concurrently, each pinned to its
own core (``os.sched_setaffinity``, inherited by the campaign's worker and its
C++ compiler; ``--cores A,B`` picks them; where affinity is unavailable they
run unpinned and the JSON says so). Each arm is a plain ``fuzzcomp run --jobs
1 --no-minimize`` for ``--minutes`` with the same ``--seed`` (so the blind arm
runs exactly the cases the guided arm would draw fresh), then, in the same
pinned process, one short campaign per planted-fault backend
(``fuzzcomp.planted``, ``--planted``) to time its first finding
(``fuzzcomp.bench.campaigns.first_detection``).

Printed and written (``OUT/guided_vs_blind.json`` and ``.md``) per arm:
cases/hour, distinct compiler signals, distinct signals per hour, signals
seen once, the bucket slugs (to judge true distinct bugs by hand), the
guided arm's fresh/mutate mix, and the time and cases to each planted fault.
Targets: guided >= 1.5x blind distinct signals, at least as many true
buckets, cases/hour at most 10% lower.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from fuzzcomp.bench.campaigns import SLOW_PLANTED, _events, _summary, first_detection, parse_planted

ARMS = (("blind", "off"), ("guided", "on"))


def _pin(core: int | None):
    if core is None or not hasattr(os, "sched_setaffinity"):
        return None

    def pin():
        os.sched_setaffinity(0, {core})
    return pin


def _run(args: list[str], core: int | None, cache: str, timeout_s: float, log: Path, minimize: bool = False) -> int:
    cmd = [sys.executable, "-m", "fuzzcomp", "run", "--quiet", *([] if minimize else ["--no-minimize"]),
           "--jobs", "1", *args]
    env = dict(os.environ, FUZZCOMP_INDUCTOR_CACHE=cache, OMP_NUM_THREADS="1")
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        try:
            return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, timeout=timeout_s,
                                  preexec_fn=_pin(core)).returncode
        except subprocess.TimeoutExpired:
            return 124


def pick_cores(p: argparse.ArgumentParser, spec: str) -> list:
    """The two cores of ``--cores A,B`` (``[None, None]``: 'none', or no affinity on this OS)."""
    if spec == "none" or not hasattr(os, "sched_setaffinity"):
        return [None, None]
    try:
        cores = [int(c) for c in spec.split(",")][:2]
    except ValueError:
        p.error(f"--cores takes two core numbers or 'none', got {spec!r}")
    have = os.sched_getaffinity(0)
    if len(cores) != 2 or any(c not in have for c in cores):
        p.error(f"--cores {spec}: this process may run on cores {sorted(have)}")
    return cores


def arm(name: str, feedback: str, opts, core: int | None, result: dict) -> None:
    root = Path(opts.out) / name
    root.mkdir(parents=True, exist_ok=True)
    cache = str(root / "inductor-cache")  # one per arm: neither warms the other's compiles
    log = root / "log.txt"
    main = root / "campaign"
    code = _run(["--minutes", str(opts.minutes), "--seed", str(opts.seed), "--feedback", feedback,
                 "--case-timeout", str(opts.case_timeout), "--out", str(main)],
                core, cache, opts.minutes * 60 + 600, log)
    s = _summary(main)
    wall = float(s.get("wall_s") or 0.0)
    sig = s.get("signals") or {}
    row = {"feedback": feedback, "core": core, "exit_code": code, "out": str(main),
           "cases": s.get("cases", 0), "valid_rate": s.get("valid_rate"), "wall_s": wall,
           "cases_per_hour": round(s.get("cases", 0) / wall * 3600, 1) if wall else 0.0,
           "distinct_signals": sig.get("distinct", 0), "signals_seen_once": sig.get("once", 0),
           "distinct_signals_per_hour": round(sig.get("distinct", 0) / wall * 3600, 1) if wall else 0.0,
           "origins": sig.get("arms", {}), "findings": s.get("findings", 0),
           "buckets": sorted(s.get("buckets") or {}), "planted": {}}
    for fault in opts.planted:
        cases = min(opts.planted_cases, SLOW_PLANTED.get(fault, opts.planted_cases))
        timeout = 15.0 if fault in SLOW_PLANTED else opts.case_timeout
        out = root / f"planted-{fault}"
        pcode = _run(["--cases", str(cases), "--seed", str(opts.seed), "--feedback", feedback,
                      "--backend", f"fuzzcomp.planted:{fault}", "--case-timeout", str(timeout),
                      "--out", str(out)], core, cache, cases * (timeout + 30) + 120, log)
        row["planted"][fault] = {"exit_code": pcode, **first_detection(_events(out))}
    result[name] = row


def markdown(res: dict) -> str:
    b, g = res["arms"]["blind"], res["arms"]["guided"]
    ratio = lambda x, y: f"{x / y:.2f}x" if y else "-"  # noqa: E731
    lines = [f"# guided vs blind, {res['minutes']} min per arm, seed {res['seed']}, "
             f"pinned: {res['pinned']}", "",
             "| measure | blind | guided | guided / blind |", "|---|---|---|---|"]
    for key, label in (("cases", "cases"), ("cases_per_hour", "cases/hour"),
                       ("distinct_signals", "distinct signals"),
                       ("distinct_signals_per_hour", "distinct signals/hour"),
                       ("signals_seen_once", "signals seen once"), ("findings", "findings")):
        lines.append(f"| {label} | {b[key]} | {g[key]} | {ratio(g[key], b[key])} |")
    lines.append(f"| buckets (judge by hand) | {len(b['buckets'])} | {len(g['buckets'])} | |")
    lines.append(f"| guided mix (cases by origin) | | {g['origins']} | |")
    for fault in res["planted"]:
        pb, pg = b["planted"].get(fault, {}), g["planted"].get(fault, {})
        cell = lambda p: (f"{p['first_finding_s']} s ({p['cases_to_detect']} cases)"  # noqa: E731
                          if p.get("detected") else "not found")
        lines.append(f"| time to planted `{fault}` | {cell(pb)} | {cell(pg)} | |")
    lines += ["", "Buckets, blind: " + (", ".join(f"`{x}`" for x in b["buckets"]) or "none"),
              "", "Buckets, guided: " + (", ".join(f"`{x}`" for x in g["buckets"]) or "none"), ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, required=True, help="campaign minutes per arm (both at once)")
    p.add_argument("--out", required=True, help="folder for both arms' campaigns and the results")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cores", default="0,1", help="the two cores to pin the arms to, 'none' for no pinning")
    p.add_argument("--planted", default="all",
                   help="'all', 'none', or a comma list of fuzzcomp.planted backends (default all)")
    p.add_argument("--planted-cases", type=int, default=20, help="case budget per planted fault and arm")
    p.add_argument("--case-timeout", type=float, default=300.0)
    opts = p.parse_args(argv)
    if not opts.minutes > 0:
        p.error("--minutes must be positive")
    try:
        opts.planted = () if opts.planted == "none" else parse_planted(opts.planted)
    except ValueError as e:
        p.error(str(e))
    cores = pick_cores(p, opts.cores)
    Path(opts.out).mkdir(parents=True, exist_ok=True)
    results: dict = {}
    t0 = time.time()
    threads = [threading.Thread(target=arm, args=(name, fb, opts, core, results))
               for (name, fb), core in zip(ARMS, cores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    res = {"minutes": opts.minutes, "seed": opts.seed, "pinned": cores[0] is not None, "cores": cores,
           "planted": list(opts.planted), "elapsed_s": round(time.time() - t0, 1), "arms": results}
    (Path(opts.out) / "guided_vs_blind.json").write_text(json.dumps(res, indent=1) + "\n")
    md = markdown(res)
    (Path(opts.out) / "guided_vs_blind.md").write_text(md)
    print(md)
    print(f"written: {Path(opts.out) / 'guided_vs_blind.json'} and .md")
    return 0 if all(r["exit_code"] == 0 for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
