"""Worker count sweep: cases/min and buckets/min of real campaigns at several --jobs values.

One command, rerunnable (from the repository root, fuzzcomp installed):

    python benchmarks/jobs_sweep.py --jobs 8,12,16,24 --minutes 3 --device cuda --out /tmp/sweep

For each value J it runs ``fuzzcomp run --jobs J --minutes M --no-minimize --quiet`` in a
subprocess, one after the other (never two at once: they would share the cores), each in
its own folder ``OUT/jobs-J`` with the same seed, and reads that campaign's ``summary.json``:

- ``cases_per_min`` = cases / the campaign's own wall time (start event to stop event, the
  budget plus start-up and stop), the rate a user gets from that many workers;
- ``buckets_per_min`` = distinct buckets / the same wall time (findings are what a campaign
  is for; with ``--no-minimize`` no worker time goes to minimising);
- ``overrun_s`` = the process's wall time minus the budget: how well the budget is kept;
- ``startup_s`` = worker start-up summed over workers, ``dropped`` = cases cut at the end.

It prints a table, names the J with the most cases/min, and writes ``OUT/jobs_sweep.json``.
The default worker count lives in ``fuzzcomp.base.config.default_jobs``: change it there when a
sweep on the target machine says another figure is better. Anything after ``--`` goes to
``fuzzcomp run`` unchanged (``-- --mode max-autotune``).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path


def parse_jobs(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"jobs_sweep: --jobs must be a comma list of whole numbers, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise SystemExit(f"jobs_sweep: --jobs must list positive numbers, got {text!r}")
    return values


def row_from_summary(jobs: int, s: dict, process_s: float, budget_s: float) -> dict:
    wall = float(s.get("wall_s") or 0.0)
    buckets = len(s.get("buckets") or {})
    return {"jobs": jobs, "cases": s.get("cases", 0), "valid_rate": round(s.get("valid_rate", 0.0), 3),
            "findings": s.get("findings", 0), "buckets": buckets, "wall_s": wall,
            "cases_per_min": round(s.get("cases", 0) / wall * 60, 2) if wall > 0 else 0.0,
            "buckets_per_min": round(buckets / wall * 60, 3) if wall > 0 else 0.0,
            "startup_s": (s.get("phase_s") or {}).get("worker start-up", 0.0),
            "dropped": s.get("dropped", 0), "process_s": round(process_s, 1),
            "overrun_s": round(process_s - budget_s, 1)}


def render(rows: list[dict]) -> str:
    head = f"{'jobs':>5} {'cases':>6} {'cases/min':>10} {'buckets':>8} {'buckets/min':>12} " \
           f"{'findings':>9} {'start-up s':>11} {'dropped':>8} {'overrun s':>10}"
    lines = [head]
    for r in rows:
        lines.append(f"{r['jobs']:>5} {r['cases']:>6} {r['cases_per_min']:>10.1f} {r['buckets']:>8} "
                     f"{r['buckets_per_min']:>12.3f} {r['findings']:>9} {r['startup_s']:>11.1f} "
                     f"{r['dropped']:>8} {r['overrun_s']:>10.1f}")
    if rows:
        best = max(rows, key=lambda r: r["cases_per_min"])
        lines.append(f"most cases/min: --jobs {best['jobs']} ({best['cases_per_min']:.1f}/min); "
                     "the default is fuzzcomp.base.config.default_jobs")
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", required=True, help="comma list of worker counts, e.g. 8,12,16,24")
    p.add_argument("--minutes", type=float, required=True, help="budget of each campaign")
    p.add_argument("--out", required=True, help="folder for the campaigns and jobs_sweep.json")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--backend", default="inductor")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    jobs = parse_jobs(args.jobs)
    if not args.minutes > 0:
        raise SystemExit("jobs_sweep: --minutes must be positive")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for j in jobs:
        folder = out / f"jobs-{j}"
        if folder.exists():
            raise SystemExit(f"jobs_sweep: {folder} exists; give a fresh --out")
        cmd = [sys.executable, "-m", "fuzzcomp", "run", "--jobs", str(j), "--minutes", str(args.minutes),
               "--device", args.device, "--backend", args.backend, "--seed", str(args.seed),
               "--no-minimize", "--quiet", "--out", str(folder), *extra]
        print(f"jobs_sweep: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        took = time.monotonic() - t0
        if r.returncode not in (0, 1) or not (folder / "summary.json").exists():
            print(f"jobs_sweep: --jobs {j} failed (exit {r.returncode}): {r.stderr.strip()[-500:]}",
                  file=sys.stderr)
            continue
        rows.append(row_from_summary(j, json.loads((folder / "summary.json").read_text()), took,
                                     args.minutes * 60))
        print(render(rows[-1:]).splitlines()[1], file=sys.stderr, flush=True)
    result = {"minutes": args.minutes, "device": args.device, "backend": args.backend, "seed": args.seed,
              "extra": extra, "rows": rows}
    (out / "jobs_sweep.json").write_text(json.dumps(result, indent=1) + "\n")
    print(render(rows))
    print(f"jobs_sweep: wrote {out / 'jobs_sweep.json'}")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
