"""Plain against novelty-directed generation, side by side in one run, from the same registry.

Run with the fuzzcomp venv's python on an otherwise idle machine with two cores:

    python benchmarks/novelty_vs_plain.py --minutes 30 --out /tmp/nvp

Both arms start at the same moment, each pinned to its own core (``--cores A,B``; see
``guided_vs_blind.py`` for the pinning), each a full ``fuzzcomp run --jobs 1`` (minimisation on:
confirmed buckets are what the novelty arm learns from) for ``--minutes`` with the same
``--seed`` and the checkout's known-bug registry:

- plain:   ``--feedback off --novelty off``
- novelty: ``--feedback on --novelty on`` (known triggers drawn less, new bugs rewarded first);
  ``--novelty-feedback off`` measures the steering alone (``--feedback off --novelty on``)

Then, in the same pinned process, one short campaign per planted-fault backend
(``fuzzcomp.planted``) with the arm's flags and ``-x``, to time its first finding.

Printed and written (``OUT/novelty_vs_plain.json`` and ``.md``) per arm: cases/hour, distinct
compiler signals, findings, new buckets (not in the registry: judge each by hand), known
buckets and known findings (rediscoveries), and the time to each planted fault.
Targets: novelty >= 2x plain's new true buckets, <= half its rediscoveries, every planted fault
found, cases/hour within 10%.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from guided_vs_blind import _run, pick_cores  # noqa: E402  (the pinned, per-arm-cache campaign runner)

from fuzzcomp.bench.campaigns import SLOW_PLANTED, _events, _summary, first_detection, parse_planted  # noqa: E402

ARMS = (("plain", ["--feedback", "off", "--novelty", "off"]),
        ("novelty", ["--feedback", "on", "--novelty", "on"]))


def arm(name: str, flags: list[str], opts, core: int | None, result: dict) -> None:
    root = Path(opts.out) / name
    root.mkdir(parents=True, exist_ok=True)
    cache = str(root / "inductor-cache")
    log = root / "log.txt"
    main = root / "campaign"
    code = _run(["--minutes", str(opts.minutes), "--seed", str(opts.seed), *flags,
                 "--case-timeout", str(opts.case_timeout), "--out", str(main)],
                core, cache, opts.minutes * 60 + 900, log, minimize=True)
    s = _summary(main)
    wall = float(s.get("wall_s") or 0.0)
    sig = s.get("signals") or {}
    buckets = s.get("buckets") or {}
    known = {k: b for k, b in buckets.items() if b.get("known")}
    row = {"flags": flags, "core": core, "exit_code": code, "out": str(main),
           "cases": s.get("cases", 0), "valid_rate": s.get("valid_rate"), "wall_s": wall,
           "cases_per_hour": round(s.get("cases", 0) / wall * 3600, 1) if wall else 0.0,
           "distinct_signals": sig.get("distinct", 0), "findings": s.get("findings", 0),
           "new_buckets": sorted(set(buckets) - set(known)),
           "confirmed_new": sorted(k for k, b in buckets.items() if k not in known and b.get("status") == "confirmed"),
           "known_buckets": sorted(known), "known_findings": sum(len(b.get("findings", ())) for b in known.values()),
           "minimise_s_by_group": s.get("minimise_s_by_group"),
           "novelty": (s.get("novelty") or {}).get("campaign_learned"), "planted": {}}
    for fault in opts.planted:
        cases = min(opts.planted_cases, SLOW_PLANTED.get(fault, opts.planted_cases))
        timeout = 15.0 if fault in SLOW_PLANTED else opts.case_timeout
        out = root / f"planted-{fault}"
        pcode = _run(["--cases", str(cases), "--seed", str(opts.seed), *flags, "-x",
                      "--backend", f"fuzzcomp.planted:{fault}", "--case-timeout", str(timeout),
                      "--out", str(out)], core, cache, cases * (timeout + 30) + 120, log)
        row["planted"][fault] = {"exit_code": pcode, **first_detection(_events(out))}
    result[name] = row


def markdown(res: dict) -> str:
    p, n = res["arms"]["plain"], res["arms"]["novelty"]
    ratio = lambda x, y: f"{x / y:.2f}x" if y else "-"  # noqa: E731
    lines = [f"# plain vs novelty ({' '.join(res.get('novelty_flags', []))}), {res['minutes']} min per arm, "
             f"seed {res['seed']}, pinned: {res['pinned']}", "",
             "| measure | plain | novelty | novelty / plain |", "|---|---|---|---|"]
    for key, label in (("cases", "cases"), ("cases_per_hour", "cases/hour"), ("distinct_signals", "distinct signals"),
                       ("findings", "findings"), ("known_findings", "known rediscoveries (findings)")):
        lines.append(f"| {label} | {p[key]} | {n[key]} | {ratio(n[key], p[key])} |")
    for key, label in (("new_buckets", "new buckets (judge by hand)"), ("confirmed_new", "new, confirmed"),
                       ("known_buckets", "known buckets")):
        lines.append(f"| {label} | {len(p[key])} | {len(n[key])} | {ratio(len(n[key]), len(p[key]))} |")
    for fault in res["planted"]:
        a, b = p["planted"].get(fault, {}), n["planted"].get(fault, {})
        cell = lambda r: (f"{r['first_finding_s']} s ({r['cases_to_detect']} cases)"  # noqa: E731
                          if r.get("detected") else "not found")
        lines.append(f"| time to planted `{fault}` | {cell(a)} | {cell(b)} | |")
    for name, r in (("plain", p), ("novelty", n)):
        lines += ["", f"New buckets, {name}: " + (", ".join(f"`{x}`" for x in r["new_buckets"]) or "none"),
                  "", f"Known buckets, {name}: " + (", ".join(f"`{x}`" for x in r["known_buckets"]) or "none")]
    lines += ["", f"Learned by the novelty arm: {n.get('novelty')}", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, required=True, help="campaign minutes per arm (both at once)")
    p.add_argument("--out", required=True, help="folder for both arms' campaigns and the results")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cores", default="0,1", help="the two cores to pin the arms to, 'none' for no pinning")
    p.add_argument("--planted", default="all", help="'all', 'none', or a comma list of fuzzcomp.planted backends")
    p.add_argument("--planted-cases", type=int, default=20, help="case budget per planted fault and arm")
    p.add_argument("--case-timeout", type=float, default=300.0)
    p.add_argument("--novelty-feedback", choices=("on", "off"), default="on",
                   help="--feedback of the novelty arm: on (new-bug reward and mutation, default) or off "
                   "(steering by the registry and confirmed buckets alone)")
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
    arms = [ARMS[0], ("novelty", ["--feedback", opts.novelty_feedback, "--novelty", "on"])]
    threads = [threading.Thread(target=arm, args=(name, flags, opts, core, results))
               for (name, flags), core in zip(arms, cores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    res = {"minutes": opts.minutes, "seed": opts.seed, "novelty_flags": arms[1][1], "pinned": cores[0] is not None, "cores": cores,
           "planted": list(opts.planted), "elapsed_s": round(time.time() - t0, 1), "arms": results}
    (Path(opts.out) / "novelty_vs_plain.json").write_text(json.dumps(res, indent=1) + "\n")
    md = markdown(res)
    (Path(opts.out) / "novelty_vs_plain.md").write_text(md)
    print(md)
    print(f"written: {Path(opts.out) / 'novelty_vs_plain.json'} and .md")
    return 0 if all(r["exit_code"] in (0, 1) for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
