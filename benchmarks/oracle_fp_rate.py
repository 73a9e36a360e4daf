"""The value oracle's false-positive rate on real Inductor, under its own rule and under
torch._dynamo.utils.same()'s default rule, seed by seed.

Each seed's case (the campaign's generator for the device) is checked as a campaign worker checks
it: real Inductor, the fp64 rule, perturbed eager runs and the eager-kernel audit where a value
mismatches. Every float value and gradient the judge compares is also judged by the rule variants
below, with the same eager, fp64, compiled and perturbed values:

  fuzzcomp  the rule as it stands (``oracles.fp64rule.compare``)
  4-half    the rule with the floor of 4 roundings of a half value's own type (before
            ``HALF_ROUNDINGS`` = 1)
  same      same()'s default: allclose(atol=rtol=1e-4), else rmse(compiled) <= m x rmse(eager) + 1e-5
            (m = 3 for fp16/bf16 or fewer than 1000 elements, else 2), then our perturbation screen
  same-raw  same()'s default alone, no perturbation screen

Perturbed runs are taken wherever any variant flags (not only where ours does), so every variant
is judged with the screen's evidence. "fuzzcomp" counts the campaign's own value verdicts (its
judge's every screen included); the same() variants skip what ours skips as eager's own
nondeterminism and the calls the exact special-value rule judges. A seed is "flagged"
under a variant when one of its values is. What the tighter variants flag beyond ours is listed,
seed by seed, for judging by hand: a false positive is a class of program, named with its test.

    python benchmarks/oracle_fp_rate.py --seeds 500 [--first 0] [--device cpu|cuda] [--jobs N] [--json OUT]

Seeds run in ``--jobs`` worker processes (a crashed or hung seed costs only itself: each worker
restarts after the last seed it finished). Nothing is timed: the figures are counts.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HALF = ("float16", "bfloat16")


def _variants(e, again, r, c, pert, floor_eps, reduce_n, coarse_eps, strict):
    """{variant: "ok" | "mismatch" | "skip"} for one compared value."""
    import torch
    from fuzzcomp.oracles import fp64rule
    from fuzzcomp.oracles.special import none_vs_zeros

    def rule():
        return fp64rule.compare(e, again, r, c, pert, strict=strict, floor_eps=floor_eps, reduce_n=reduce_n,
                                coarse_eps=coarse_eps)[0]
    ours = rule()
    kept, fp64rule.HALF_ROUNDINGS = fp64rule.HALF_ROUNDINGS, 4
    try:
        out = {"fuzzcomp": ours, "4-half": rule()}
    finally:
        fp64rule.HALF_ROUNDINGS = kept
    if none_vs_zeros("grad ", e, c, special=True):  # the judge's accepted difference, in every variant
        return {k: "ok" for k in ("fuzzcomp", "4-half", "same", "same-raw")}
    if not (isinstance(e, torch.Tensor) and isinstance(c, torch.Tensor) and e.dtype.is_floating_point
            and c.shape == e.shape and c.dtype == e.dtype and isinstance(r, torch.Tensor)
            and r.shape == e.shape) or not isinstance(again, torch.Tensor) \
            or not fp64rule.bitwise_same(e.detach().cpu(), again.detach().cpu()):
        out["same"] = out["same-raw"] = ours  # not a float value both rules judge, or eager varies
        return out
    ed, cd, rd = e.detach().cpu().double(), c.detach().cpu().double(), r.detach().cpu().double()
    fin = rd.isfinite() & ed.isfinite() & cd.isfinite()
    if (rd.isfinite() & ed.isfinite() & ~cd.isfinite()).any():
        out["same"] = out["same-raw"] = "mismatch"
        return out
    if not fin.any() or torch.allclose(e.detach().cpu(), c.detach().cpu(), atol=1e-4, rtol=1e-4, equal_nan=True):
        out["same"] = out["same-raw"] = "ok"
        return out

    def rmse(a):
        return math.sqrt(float(((a[fin] - rd[fin]) ** 2).mean()))
    m = 3.0 if str(e.dtype).split(".")[-1] in HALF or e.numel() < 1000 else 2.0
    err_c, err_e = rmse(cd), rmse(ed)
    raw = "ok" if err_c <= m * err_e + 1e-5 else "mismatch"
    out["same-raw"] = raw
    pert = [p.detach().cpu().double() for p in pert if isinstance(p, torch.Tensor) and p.shape == e.shape]
    if raw == "ok" or not pert:
        out["same"] = raw
        return out
    err_p = max((rmse(p) if p[fin].isfinite().all() else math.inf) for p in pert)
    out["same"] = "skip" if err_c <= m * max(err_e, err_p) + 1e-5 else "mismatch"
    return out


_RECORDS: list = []


def _install_recorder() -> None:
    """Wrap the judge's value loop (once per process): each compared value is also judged by every
    variant, and perturbed runs are taken wherever some variant flags, not only ours."""
    import importlib
    judge = importlib.import_module("fuzzcomp.oracles.judge")
    check_mod = importlib.import_module("fuzzcomp.judge.check")
    real_values, real_needs = judge._judge_values, judge.needs_perturbation

    def values(backend, k, rec, strict=False, floor_eps=0.0, reduce_n=1, coarse_eps=0.0, by_label=None):
        e, c = rec.eager, rec.compiled
        ref = rec.fp64.values if rec.fp64 is not None and rec.fp64.error is None else None
        if len(e.values) == len(c.values):
            for i, label in enumerate(e.labels):
                if label.startswith(("alias ", "state ")) or c.labels[i] != label:
                    continue
                r = ref[i] if ref is not None and i < len(ref) else None
                runs = rec.perturbed_fine if label in (by_label or {}) and rec.perturbed_fine else rec.perturbed
                pert = [p.values[i] for p in runs if p.error is None and i < len(p.values)]
                v = _variants(e.values[i], rec.eager_again.values[i], r, c.values[i], pert,
                              float((by_label or {}).get(label, floor_eps)), reduce_n, coarse_eps, strict)
                dtype = str(getattr(e.values[i], "dtype", "")).split(".")[-1]
                _RECORDS.append({"call": k, "label": label, "dtype": dtype, "perturbed": bool(rec.perturbed),
                                 "kernel_bug": bool(rec.eager_kernel_bugs), **v})
        return real_values(backend, k, rec, strict, floor_eps, reduce_n, coarse_eps, by_label=by_label)

    def needs(verdicts):
        return real_needs(verdicts) or any(r["same-raw"] == "mismatch" and not r["perturbed"] for r in _RECORDS)
    judge._judge_values = values
    check_mod.needs_perturbation = needs


VALUE_SYMPTOMS = ("numeric", "gradient", "mutation")


def _seed_result(seed: int, device: str) -> dict:
    import torch
    from fuzzcomp.generators import GenConfig, generate
    from fuzzcomp.judge.check import check
    from fuzzcomp.run.execute import ExecOptions
    _RECORDS.clear()
    case = generate(seed, GenConfig.for_device(device))
    torch._dynamo.reset()
    obs, verdicts = check(case, ExecOptions(ladder=False, culprit=False))
    device_bound = set(obs.stats.get("special_calls") or ())  # judged by the exact special-value rule
    last: dict = {}  # a value's variants as judged last (after the perturbed runs where taken)
    for r in _RECORDS:
        if r["call"] not in device_bound:
            last[(r["call"], r["label"])] = r
    ours = sorted({f"{v.symptom}: {v.detail[:160]}" for v in verdicts  # values, not torch globals
                   if v.symptom in VALUE_SYMPTOMS and v.oracle in ("fp64-rule", "cross-device")
                   and not v.label.startswith("state ")})
    return {"seed": seed, "valid": obs.eager_valid, "values": list(last.values()), "ours": ours,
            "verdicts": sorted({f"{v.symptom}: {v.detail[:160]}" for v in verdicts})}


def worker(seeds: list[int], device: str, out: Path, timeout_s: float) -> None:
    import warnings
    warnings.filterwarnings("ignore")
    from fuzzcomp.run.execute import configure_torch
    configure_torch()
    _install_recorder()

    def alarm(*_):
        raise TimeoutError(f"seed over {timeout_s:g} s")
    signal.signal(signal.SIGALRM, alarm)
    with out.open("a") as f:
        for seed in seeds:
            signal.alarm(int(timeout_s))
            try:
                res = _seed_result(seed, device)
            except BaseException as e:  # noqa: BLE001 - one seed's failure is recorded, not fatal
                if isinstance(e, KeyboardInterrupt):
                    raise
                res = {"seed": seed, "error": f"{type(e).__name__}: {str(e)[:200]}"}
            finally:
                signal.alarm(0)
            f.write(json.dumps(res) + "\n")
            f.flush()


def _done(path: Path) -> set[int]:
    if not path.exists():
        return set()
    seeds = set()
    for line in path.read_text().splitlines():
        try:
            seeds.add(json.loads(line)["seed"])
        except (ValueError, KeyError):
            continue  # a line cut by a crash
    return seeds


def run(seeds: list[int], device: str, jobs: int, folder: Path, timeout_s: float,
        budget_s: float | None = None) -> list[dict]:
    """Each of ``jobs`` processes takes every jobs-th seed; one that dies is restarted after the
    seed it died on (that seed is recorded as a crash). Past ``budget_s`` the workers are stopped
    and what they finished is the result (the summary says how many seeds that is)."""
    end = None if budget_s is None else time.monotonic() + budget_s
    folder.mkdir(parents=True, exist_ok=True)
    parts = [seeds[k::jobs] for k in range(jobs)]
    procs: dict[int, subprocess.Popen] = {}

    def launch(k: int) -> None:
        path = folder / f"part{k}.jsonl"
        left = [s for s in parts[k] if s not in _done(path)]
        if left:
            procs[k] = subprocess.Popen([sys.executable, __file__, "--worker", ",".join(map(str, left)),
                                         "--device", device, "--out", str(path), "--timeout", str(timeout_s)])
    for k in range(jobs):
        launch(k)
    while procs:
        time.sleep(1)
        if end is not None and time.monotonic() > end:
            for p in procs.values():
                p.kill()
            for p in procs.values():
                p.wait()
            break
        for k, p in list(procs.items()):
            if p.poll() is None:
                continue
            del procs[k]
            path = folder / f"part{k}.jsonl"
            left = [s for s in parts[k] if s not in _done(path)]
            if p.returncode != 0 and left:  # died on left[0]
                with path.open("a") as f:
                    f.write(json.dumps({"seed": left[0], "error": f"worker died (exit {p.returncode})"}) + "\n")
                launch(k)
    rows = []
    for k in range(jobs):
        rows += [json.loads(ln) for ln in (folder / f"part{k}.jsonl").read_text().splitlines() if ln.strip()]
    return sorted(rows, key=lambda r: r["seed"])


def summarise(rows: list[dict]) -> dict:
    variants = ("fuzzcomp", "4-half", "same", "same-raw")
    judged = [r for r in rows if "values" in r and r["valid"]]
    flagged = {v: sorted(r["seed"] for r in judged if any(x[v] == "mismatch" and not x["kernel_bug"]
                                                        for x in r["values"])) for v in variants[1:]}
    flagged = {"fuzzcomp": sorted(r["seed"] for r in judged if r["ours"]), **flagged}
    by_dtype = {}
    for r in judged:
        for x in r["values"]:
            d = by_dtype.setdefault(x["dtype"] or "other", Counter())
            d["values"] += 1
            for v in variants:
                d[v] += x[v] == "mismatch" and not x["kernel_bug"]
    beyond = {v: [{"seed": r["seed"], "values": [f'{x["label"]} ({x["dtype"]})' for x in r["values"]
                                                  if x[v] == "mismatch" and x["fuzzcomp"] != "mismatch"]}
                  for r in judged if r["seed"] in flagged[v] and r["seed"] not in flagged["fuzzcomp"]]
              for v in ("4-half", "same", "same-raw")}
    return {"seeds": len(rows), "judged": len(judged), "errors": sum("error" in r for r in rows),
            "flagged": {v: len(s) for v, s in flagged.items()}, "flagged_seeds": flagged,
            "values_by_dtype": {d: dict(c) for d, c in sorted(by_dtype.items())}, "beyond_ours": beyond}


def render(s: dict) -> str:
    lines = [f"seeds {s['seeds']}, judged (eager-valid) {s['judged']}, harness errors {s['errors']}",
             "", "| variant | seeds flagged | rate |", "|---|---|---|"]
    for v, n in s["flagged"].items():
        lines.append(f"| {v} | {n} | {n / max(1, s['judged']):.1%} |")
    lines += ["", "| dtype | values judged | fuzzcomp flags | 4-half flags | same flags | same-raw flags |",
              "|---|---|---|---|---|---|"]
    for d, c in s["values_by_dtype"].items():
        lines.append(f"| {d} | {c.get('values', 0)} | {c.get('fuzzcomp', 0)} | {c.get('4-half', 0)} | "
                     f"{c.get('same', 0)} | {c.get('same-raw', 0)} |")
    for v, rows in s["beyond_ours"].items():
        lines.append(f"\nflagged by {v} and not by fuzzcomp: {len(rows)} seeds")
        lines += [f"  seed {r['seed']}: {', '.join(r['values'][:4])}" for r in rows[:40]]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=500)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds a seed may take")
    ap.add_argument("--dir", default="fp_rate_runs", help="folder for the per-worker results")
    ap.add_argument("--budget-s", type=float, help="stop the workers after this long; summarise what is done")
    ap.add_argument("--json")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker([int(s) for s in a.worker.split(",")], a.device, Path(a.out), a.timeout)
        return 0
    if a.seeds < 1 or a.jobs < 1:
        ap.error("--seeds and --jobs must be at least 1")
    folder = Path(a.dir) / f"{a.device}-{a.first}-{a.seeds}"
    rows = run(list(range(a.first, a.first + a.seeds)), a.device, a.jobs, folder, a.timeout, a.budget_s)
    s = summarise(rows)
    print(render(s))
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": s, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
