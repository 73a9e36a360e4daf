"""Re-render a campaign's minimised findings with today's renderer and run each repro in fresh
processes, as the campaign's own check does: the figures of the repro-size issue.

    python benchmarks/repro_check.py fuzz-out --out rows      # repros into rows/, rows/rows.jsonl
    python benchmarks/repro_check.py fuzz-out --out rows --runs 3 --jobs 8

For each finding with a ``minimized.json``: the short form where the renderer can say the case
(else why not), run ``--runs`` times (``pipeline.confirm_repro``). A short form that never shows
the bug gives way, as in the campaign (``pipeline.fall_back``), to the unpruned short file and
then to the long one, only where that one shows it. It prints one row per repro (lines, form,
fresh-process hits) and the summary: median and maximum lines, how many are under 60, how many
short ones reproduce alone. Run it where the
campaign ran (a CUDA campaign on a GPU box): the repro needs the campaign's device.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fuzzcomp.reduce.passes import drop_unused_symbols
from fuzzcomp.campaign.pipeline import confirm_repro, fall_back
from fuzzcomp.render.repro import render_repro, short_spec
from fuzzcomp.render.shortrepro import CASE_PREFIX, is_short, short_or_reason
from fuzzcomp.findings.store import case_from_json
from fuzzcomp.findings.triage import BucketKey


def _lines(text: str) -> int:
    return sum(not ln.startswith(CASE_PREFIX) for ln in text.splitlines())


def check(d: Path, out: Path, runs: int, timeout_s: float) -> dict:
    m = json.loads((d / "minimized.json").read_text())
    key = BucketKey.from_json(json.loads((d / "finding.json").read_text())["bucket"])
    case = case_from_json(m["case"])
    detail = m.get("detail", "")
    path = out / f"{d.name}.py"
    short = render_repro(case, key, detail)
    path.write_text(short)
    why = ""
    if not is_short(short):  # why the renderer could not say it (a second render, only then)
        _, why = short_or_reason(short_spec(next(drop_unused_symbols(case), case), key, detail))
    row = {"id": d.name, "bucket": key.slug(), "form": "short" if is_short(short) else "long",
           "why_long": why, **confirm_repro(path, runs, timeout_s)}
    if row["form"] == "short" and row["confirmed"] is False and not row.get("flaky"):
        got = fall_back(path, short, dict(row), case, key, detail, runs, timeout_s, lambda: False)
        row.update(got, form=got.get("repro_form", "short"))
    row["lines"] = _lines(path.read_text())
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("campaign")
    ap.add_argument("--out", required=True, help="folder for the repros and rows.jsonl")
    ap.add_argument("--runs", type=int, default=2, help="fresh processes per repro (default 2)")
    ap.add_argument("--jobs", type=int, default=4, help="repros checked at once (default 4)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run (default 300)")
    a = ap.parse_args(argv)
    dirs = sorted(p.parent for p in Path(a.campaign, "findings").glob("*/minimized.json"))
    if not dirs:
        print(f"no minimised findings under {a.campaign}/findings", file=sys.stderr)
        return 2
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log = (out / "rows.jsonl").open("w")

    def one(d):  # each row on disk as soon as it is known: a run cut short keeps what it checked
        row = check(d, out, a.runs, a.timeout)
        log.write(json.dumps(row) + "\n")
        log.flush()
        return row
    with ThreadPoolExecutor(a.jobs) as pool:
        rows = list(pool.map(one, dirs))
    log.close()
    for r in sorted(rows, key=lambda r: r["lines"]):
        print(f"{r['lines']:4d} {r['form']:5s} {r['confirm_runs']:>4s} {r['bucket']:40s} {r['id']}  "
              f"{str(r.get('repro_says', ''))[:70]}" + (f"  [long: {r['why_long']}]" if r["why_long"] else ""))
    sizes = [r["lines"] for r in rows]
    short = [r for r in rows if r["form"] == "short"]
    alone = sum(r["confirmed"] is True for r in short)
    print(f"repros: {len(rows)}; lines median {statistics.median(sizes):g}, max {max(sizes)}; "
          f"under 60 lines: {sum(x < 60 for x in sizes)}/{len(rows)}")
    print(f"short: {len(short)}/{len(rows)}; short ones failing in every fresh process: {alone}/{len(short)}; "
          f"flaky: {sum(bool(r.get('flaky')) for r in rows)}; neither form reproduced: "
          f"{sum('long_said' in r for r in rows)}; the unpruned short file needed: "
          f"{sum(bool(r.get('unpruned')) for r in rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
