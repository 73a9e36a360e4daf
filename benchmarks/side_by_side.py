"""fuzzcomp and NNSmith (pt2 backend, CPU) side by side, in one run, for the same time.

Run with the fuzzcomp venv's python; NNSmith runs from its own venv:

    python benchmarks/side_by_side.py --minutes 5 --out /tmp/sbs \
        --nnsmith-python /work/venvs/nnsmith/bin/python

Both tools start at the same moment and run concurrently, one process each,
single-threaded (fuzzcomp: ``--jobs 1``, one worker with 1 torch thread;
NNSmith: its in-process loop, torch threads 1), each with Inductor's
``compile_threads`` = 1 and its own fresh Inductor cache folder. Each one's CPU
seconds come from ``os.wait4`` (the process and the children it waited for),
so cases per CPU-hour compare fairly even on a loaded machine.

Then each tool's findings are judged by PyTorch's fuzzer rule:
- NNSmith's reports: ``nnsmith_pt2.py recheck`` re-runs each reported model
  eager x2, in fp64 and freshly compiled, and applies fuzzcomp's fp64 rule
  (``fuzzcomp.oracles.fp64rule.compare``) or, for crashes, the parity rule.
- fuzzcomp's findings: one ``fuzzcomp replay`` per bucket in a fresh process
  (exit 1 = the discrepancy shows again under the same rule).
Program size is measured the same way for both: the ops Dynamo captured into
graphs (``counters["stats"]["calls_captured"]``: fuzzcomp's ``captured_ops`` in
its summary, NNSmith's from the shim's running totals), so ``--max-nodes`` can
be set to compare the tools at the same compiled program size.
Writes ``OUT/side_by_side.json`` and prints it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _spawn(cmd: list[str], log: Path, cache: str, extra_env: dict | None = None) -> subprocess.Popen:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1",
               **(extra_env or {}))
    return subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)


def _wait_all(procs: dict, deadline: float) -> dict:
    """name -> [exit code, wall seconds from start to exit, CPU seconds (user+sys, waited-for children
    included)], each process reaped the moment it exits."""
    done: dict = {}
    while len(done) < len(procs):
        for name, p in procs.items():
            if name in done:
                continue
            late = time.monotonic() >= deadline
            if late:
                os.killpg(p.pid, 9)
            pid, status, ru = os.wait4(p.pid, 0 if late else os.WNOHANG)
            if pid:
                p.returncode = os.waitstatus_to_exitcode(status)
                done[name] = [p.returncode, time.monotonic() - p._bench_t0, ru.ru_utime + ru.ru_stime]
        time.sleep(0.2)
    return done


def _nnsmith_counts(log_dir: Path) -> dict:
    text = ""
    for f in log_dir.rglob("*.log"):
        text += f.read_text(errors="replace")
    grab = lambda pat: int(m.group(1)) if (m := re.search(pat, text)) else None  # noqa: E731
    return {"cases": grab(r"Total (\d+) testcases generated"), "reports": grab(r"Total (\d+) bugs found"),
            "failed_to_make": grab(r"Total (\d+) failed to make testcases")}


def _replay_buckets(out: Path, timeout_s: float) -> list[dict]:
    try:
        s = json.loads((out / "summary.json").read_text())
    except (OSError, json.JSONDecodeError):
        return []
    rows = []
    for slug, b in s.get("buckets", {}).items():
        fid = b["findings"][0]
        cmd = [sys.executable, "-m", "fuzzcomp", "replay", str(out / "findings" / fid), "--original"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
            code, tail = p.returncode, (p.stdout.strip().splitlines() or [""])[-1]
        except subprocess.TimeoutExpired:
            code, tail = 124, "replay timed out"
        rows.append({"bucket": slug, "count": len(b["findings"]), "replay_exit": code, "true": code == 1,
                     "says": tail[:200]})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--nnsmith-python", default="/work/venvs/nnsmith/bin/python")
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--max-nodes", type=int, default=10,
                    help="NNSmith mgen.max_nodes (fuzzcomp's programs average ~9 statements)")
    ap.add_argument("--fuzzcomp-config", default=None, metavar="TOML",
                    help="a fuzzcomp settings file for its run, e.g. with [generator] max_stmts = 28 "
                         "to match NNSmith's program size (captured ops per case)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--judge-only", action="store_true",
                    help="skip the runs; recount and re-judge what an earlier run left in --out")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=args.judge_only)
    secs = int(args.minutes * 60)
    fz_out, nn_root = out / "fuzzcomp", out / "nnsmith"
    fz_cmd = [sys.executable, "-m", "fuzzcomp", "run", "--minutes", str(args.minutes), "--jobs", "1",
              "--backend", args.backend, "--no-minimize", "--quiet", "--seed", str(args.seed),
              "--out", str(fz_out)] + (["--config", args.fuzzcomp_config] if args.fuzzcomp_config else [])
    nn_cmd = [args.nnsmith_python, str(HERE / "nnsmith_pt2.py"), "fuzz", f"fuzz.time={secs}s",
              "model.type=torch", "backend.type=pt2", f"mgen.max_nodes={args.max_nodes}",
              f"fuzz.root={nn_root}", f"fuzz.seed={args.seed}", f"hydra.run.dir={out / 'nnsmith-hydra'}"]
    env_backend = {"NNSMITH_PT2_BACKEND": args.backend}
    os.environ.update(env_backend)
    capture_path = out / "nnsmith_capture.json"   # the shim's running totals of what Dynamo captured
    caches = [tempfile.mkdtemp(prefix="sbs-cache-fz-"), tempfile.mkdtemp(prefix="sbs-cache-nn-")]
    procs = {}
    runs_path = out / "runs.json"
    if args.judge_only:
        waited = json.loads(runs_path.read_text())
    else:
        for name, cmd, cache in (("fuzzcomp", fz_cmd, caches[0]), ("nnsmith", nn_cmd, caches[1])):
            extra = {"NNSMITH_PT2_STATS": str(capture_path)} if name == "nnsmith" else {}
            p = _spawn(cmd, out / f"{name}.log", cache, extra)
            p._bench_t0 = time.monotonic()
            procs[name] = p
        deadline = time.monotonic() + secs + 600
        waited = _wait_all(procs, deadline)
        runs_path.write_text(json.dumps(waited))
    res = {"minutes": args.minutes, "mode": "concurrent, one single-threaded process each",
           "commands": {"fuzzcomp": " ".join(fz_cmd), "nnsmith": " ".join(nn_cmd)}, "env": env_backend,
           "loadavg_after": [round(x, 2) for x in os.getloadavg()]}
    fz_sum = json.loads((fz_out / "summary.json").read_text()) if (fz_out / "summary.json").exists() else {}
    nn = _nnsmith_counts(out / "nnsmith-hydra")
    for name, (code, wall, cpu) in waited.items():
        res[name] = {"exit_code": code, "process_wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}
    fz = res["fuzzcomp"]
    fz.update(cases=fz_sum.get("cases"), valid_rate=fz_sum.get("valid_rate"), findings=fz_sum.get("findings"),
              distinct=len(fz_sum.get("buckets", {})), captured_ops=fz_sum.get("captured_ops"),
              graphs=fz_sum.get("graphs"))
    res["nnsmith"].update(nn)
    try:   # what Dynamo captured of NNSmith's models (its SymbolNet graph-breaks between many ops)
        cap = json.loads(capture_path.read_text())
        res["nnsmith"].update(captured_ops=cap["captured_ops"], graphs=cap["graphs"],
                              compiled_models=cap["models"])
    except (OSError, json.JSONDecodeError, KeyError):
        pass
    for name, cases in (("fuzzcomp", fz.get("cases")), ("nnsmith", nn.get("cases"))):
        r = res[name]
        r["cases_per_hour"] = round(cases / r["process_wall_s"] * 3600, 1) if cases else 0.0
        r["cases_per_cpu_hour"] = round(cases / r["cpu_s"] * 3600, 1) if cases and r["cpu_s"] else 0.0
        if r.get("captured_ops") is not None and cases:
            # program size as the compiler saw it: ops in Dynamo-captured graphs (recompiles included)
            r["captured_ops_per_case"] = round(r["captured_ops"] / cases, 2)
            r["captured_ops_per_cpu_hour"] = round(r["captured_ops"] / r["cpu_s"] * 3600, 1) if r["cpu_s"] else 0.0
    # judge both tools' findings by the fp64 / parity rules
    p = subprocess.run([args.nnsmith_python, str(HERE / "nnsmith_pt2.py"), "recheck", str(nn_root),
                        str(out / "nnsmith_recheck.json")], capture_output=True, text=True,
                       env=dict(os.environ, TORCHINDUCTOR_CACHE_DIR=caches[1]))
    try:
        rc = json.loads((out / "nnsmith_recheck.json").read_text())
        res["nnsmith"].update(distinct=rc["distinct"], true_reports=rc["true_reports"],
                              true_distinct=rc["true_distinct"])
    except (OSError, json.JSONDecodeError, KeyError):
        res["nnsmith"]["recheck_error"] = (p.stderr.strip().splitlines() or [""])[-1]
    rows = _replay_buckets(fz_out, 600)
    fz.update(true_distinct=sum(r["true"] for r in rows), replays=rows)
    if fz.get("cases_per_cpu_hour") and res["nnsmith"].get("cases_per_cpu_hour"):
        res["ratio_cases_per_cpu_hour_fuzzcomp_over_nnsmith"] = round(
            fz["cases_per_cpu_hour"] / res["nnsmith"]["cases_per_cpu_hour"], 3)
    if fz.get("cases_per_hour") and res["nnsmith"].get("cases_per_hour"):
        res["ratio_cases_per_hour_fuzzcomp_over_nnsmith"] = round(
            fz["cases_per_hour"] / res["nnsmith"]["cases_per_hour"], 3)
    if fz.get("captured_ops_per_cpu_hour") and res["nnsmith"].get("captured_ops_per_cpu_hour"):
        res["ratio_captured_ops_per_cpu_hour_fuzzcomp_over_nnsmith"] = round(
            fz["captured_ops_per_cpu_hour"] / res["nnsmith"]["captured_ops_per_cpu_hour"], 3)
    (out / "side_by_side.json").write_text(json.dumps(res, indent=1))
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
