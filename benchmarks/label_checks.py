"""Knock-out label checks, side by side: each probe on the bucket's stage backend against Inductor.

    python benchmarks/label_checks.py CAMPAIGN [--json OUT.json]

For every finding of a finished campaign whose known label was checked by knock-out
(``status.json``: ``label_check.how == "knock-out"``), the same check
(``fuzzcomp.campaign.pipeline.knockout_check``) runs twice, in alternating order, each time on
a fresh worker warmed on an unrelated program: once as the campaign now runs it (``probe_form``:
a bucket the ladder placed below Inductor is probed on that stage's backend) and once with every
probe on the case's own backend, as before. It prints, per finding, the bucket's stage, both
verdicts and both times, then the totals and their ratio. The verdicts must agree: a
disagreement is printed and the exit status is 1. Both runs share the machine's load, so the ratio is fair on a busy machine;
the absolute seconds are not.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import fuzzcomp.campaign.pipeline as pipeline
from fuzzcomp.findings.known import claim
from fuzzcomp.findings.store import Store
from fuzzcomp.generators import generate
from fuzzcomp.workers.worker import Worker, WorkerSettings

WARM_SEED = 12345


def checked(store: Store) -> list[str]:
    """The findings whose label a knock-out checked, in the campaign's order."""
    out = []
    for fid in store.finding_ids():
        check = (store.status(fid) or {}).get("label_check") or {}
        if check.get("how") == "knock-out":
            out.append(fid)
    return out


def fresh_worker(timeout_s: float) -> Worker:
    """A new worker, warmed on an unrelated program under each backend: every timed check starts
    from the same state (a worker that ran the check before would load its C++ kernels from the
    code cache, and the second arm would look faster)."""
    worker = Worker(0, WorkerSettings())
    worker.start()
    warm = generate(WARM_SEED)
    for backend in ("inductor", "aot_eager", "aot_eager_decomp_partition", "eager"):
        pipeline.probe_keys(worker, warm.with_compile(backend=backend, mode=None), timeout_s)
    return worker


def one(case, key, match, staged: bool, timeout_s: float) -> tuple[str, float]:
    saved = pipeline.probe_form
    worker = fresh_worker(timeout_s)
    if not staged:
        pipeline.probe_form = lambda c, k: c
    try:
        t0 = time.perf_counter()
        verdict, n, proven = pipeline.knockout_check(worker, case, key, match, timeout_s)
        return f"{verdict or 'cannot tell'}:{proven.bug.id}:{n}", time.perf_counter() - t0
    finally:
        pipeline.probe_form = saved
        worker.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("campaign", type=Path)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args(argv)
    store = Store(args.campaign)
    fids = checked(store)
    if not fids:
        print(f"no knock-out label check in {args.campaign}", file=sys.stderr)
        return 2
    rows, bad = [], 0
    for i, fid in enumerate(fids):
        data = store.finding(fid)
        case, key = data["case_obj"], data["bucket_obj"]
        match = claim(key, case)
        if match is None:
            print(f"{fid}: no registry claim now, skipped")
            continue
        got = {}
        for staged in ((True, False) if i % 2 == 0 else (False, True)):
            got[staged] = one(case, key, match, staged, args.timeout)
        agree = got[True][0] == got[False][0]
        bad += not agree
        rows.append({"id": fid, "stage": key.stage, "staged": got[True][0], "inductor": got[False][0],
                     "staged_s": round(got[True][1], 2), "inductor_s": round(got[False][1], 2),
                     "agree": agree})
        r = rows[-1]
        print(f"{fid} {key.stage:13} staged {r['staged_s']:6.2f} s {r['staged']:45}"
              f" as-is {r['inductor_s']:6.2f} s {r['inductor']}{'' if agree else '  DISAGREE'}", flush=True)
    a = sum(r["staged_s"] for r in rows)
    b = sum(r["inductor_s"] for r in rows)
    print(f"{len(rows)} checks: staged {a:.1f} s, as-is {b:.1f} s, ratio {a / b:.2f}; "
          f"{len(rows) - bad} of {len(rows)} verdicts agree" if rows else "no check ran")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "staged_s": a, "as_is_s": b}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
