"""Judge cases with one edge capability forced under a real backend, in parallel processes.

    python benchmarks/edges_inductor.py --cases 20 [--backend inductor] [--device cpu|cuda] [--jobs 14]
        [--minutes 8] [--out FILE]

For each edge of ``generators.edges`` it takes the first ``--cases`` seeds whose forced case has
the edge, judges each in a fresh worker process (one thread each) and prints, per edge, how many
were clean, how many gave verdicts the known-bug registry claims (with the entry) and how many
gave new ones (with the seed and the first verdict): the false-positive and reach check of the
edges. Cases still running at ``--minutes`` are counted as unfinished. ``--out`` saves the rows
as JSON.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time


def _config(cap: str, device: str):
    from fuzzcomp.generators import GenConfig
    return GenConfig.for_device(device, force=(cap,))


def _one(args):
    cap, seed, backend, device = args
    import warnings
    warnings.simplefilter("ignore")
    import torch
    torch.set_num_threads(1)
    from fuzzcomp.findings.known import claim
    from fuzzcomp.findings.triage import bucket_of
    from fuzzcomp.generators import generate
    from fuzzcomp.judge.check import check
    from fuzzcomp.run.execute import configure_torch
    configure_torch()
    case = generate(seed, _config(cap, device)).with_compile(backend=backend, device=device)
    start = time.perf_counter()
    try:
        _obs, verdicts = check(case)
    except Exception as e:  # noqa: BLE001  (a harness failure is a row too)
        return {"cap": cap, "seed": seed, "error": f"{type(e).__name__}: {e}"[:300]}
    rows = []
    for v in verdicts:
        m = claim(bucket_of(v), case)
        rows.append({"symptom": v.symptom, "oracle": v.oracle, "detail": v.detail[:240],
                     "known": m.bug.id if m else None})
    return {"cap": cap, "seed": seed, "secs": round(time.perf_counter() - start, 1), "verdicts": rows}


def seeds_with(cap: str, n: int, device: str) -> list[int]:
    from fuzzcomp.generators import generate
    from fuzzcomp.generators.features import features
    out, seed = [], 0
    while len(out) < n and seed < 50 * n:
        if cap in features(generate(seed, _config(cap, device))):
            out.append(seed)
        seed += 1
    return out


def main(argv=None) -> int:
    from fuzzcomp.generators.edges import EDGE_CAPABILITIES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--jobs", type=int, default=max(1, multiprocessing.cpu_count() - 2))
    ap.add_argument("--minutes", type=float, default=8.0)
    ap.add_argument("--caps", default=",".join(EDGE_CAPABILITIES))
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    work = [(cap, s, args.backend, args.device) for cap in args.caps.split(",")
            for s in seeds_with(cap, args.cases, args.device)]
    deadline = time.time() + args.minutes * 60
    ctx = multiprocessing.get_context("spawn")
    rows = []
    with ctx.Pool(args.jobs, maxtasksperchild=1) as pool:
        pending = [pool.apply_async(_one, (w,)) for w in work]
        for w, p in zip(work, pending):
            try:
                rows.append(p.get(timeout=max(1.0, deadline - time.time())))
            except multiprocessing.TimeoutError:
                rows.append({"cap": w[0], "seed": w[1], "error": "unfinished"})
        pool.terminate()
    for cap in args.caps.split(","):
        mine = [r for r in rows if r["cap"] == cap]
        clean = [r for r in mine if not r.get("error") and not r["verdicts"]]
        known = [r for r in mine if not r.get("error") and r["verdicts"] and all(v["known"] for v in r["verdicts"])]
        new = [r for r in mine if not r.get("error") and any(not v["known"] for v in r["verdicts"])]
        err = [r for r in mine if r.get("error")]
        print(f"{cap}: {len(mine)} cases, clean {len(clean)}, known {len(known)}, new {len(new)}, "
              f"unfinished/errors {len(err)}")
        for r in known:
            print(f"  known  seed {r['seed']}: {sorted({v['known'] for v in r['verdicts']})}")
        for r in new:
            v = next(v for v in r["verdicts"] if not v["known"])
            print(f"  NEW    seed {r['seed']}: {v['symptom']} [{v['oracle']}] {v['detail'][:160]}")
        for r in err:
            print(f"  error  seed {r['seed']}: {r['error'][:160]}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
