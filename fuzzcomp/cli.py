"""The ``fuzzcomp`` command line: run, replay, minimize, promote, report, show, stats, bench.

Contract: every user mistake (bad flag or value, unknown backend, missing or
broken file, unimportable module) ends with one line ``fuzzcomp: error: ...``
on stderr and exit code 2, never a traceback. Exit 0 means the command did
its job (a campaign that found bugs still exits 0; ``replay`` exits 1 when the
bug shows).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_USAGE = 2


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise UsageError(message)


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return v


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return v


def _nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="fuzzcomp", description="Differential fuzzer for torch.compile: random PyTorch "
                "programs, eager vs compiled, minimised standalone repros.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    r = sub.add_parser("run", help="run a fuzzing campaign",
                       description="Generate programs, run each eager and compiled in isolated workers, "
                       "record every discrepancy, minimise it and write a repro. Give a budget with "
                       "--hours, --minutes or --cases (they combine: whichever ends first). Settings "
                       "also come from ./fuzzcomp.toml or [tool.fuzzcomp] in ./pyproject.toml (flags win). "
                       "Exit 0: budget spent; 130: stopped by Ctrl-C/SIGTERM (all saved); 1: a disk "
                       "write failed; 2: bad input.")
    r.add_argument("--hours", type=_positive_float, help="time budget in hours")
    r.add_argument("--minutes", type=_positive_float, help="time budget in minutes")
    r.add_argument("--cases", type=_positive_int, help="stop after this many cases (campaign total)")
    r.add_argument("--seed", type=_nonneg_int, default=None, help="campaign seed (default 0)")
    r.add_argument("--jobs", type=_positive_int, default=None,
                   help="worker processes (default: number of CPU cores)")
    r.add_argument("--device", choices=("cpu", "cuda"), default=None)
    r.add_argument("--backend", default=None,
                   help="a registered torch.compile backend name, or module:function for your own "
                   "(default inductor)")
    r.add_argument("--mode", default=None,
                   choices=("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"))
    r.add_argument("--half-rounding", choices=("fp64", "strict"), default=None,
                   help="judge fp16/bf16 values by the fp64 rule (default), or strict: Inductor emulates "
                   "eager's half-precision rounding (emulate_precision_casts) and must match eager")
    r.add_argument("--out", default=None,
                   help="campaign folder (default reports/run-YYYYmmdd-HHMMSS)")
    r.add_argument("--resume", nargs="?", const=True, default=None, metavar="DIR",
                   help="continue the campaign in DIR (or in --out)")
    r.add_argument("--config", default=None, metavar="TOML",
                   help="settings file (default ./fuzzcomp.toml, else [tool.fuzzcomp] in ./pyproject.toml)")
    r.add_argument("--no-minimize", action="store_true",
                   help="record findings only; minimise later with `fuzzcomp minimize`")
    r.add_argument("--minimize-budget", type=_positive_float, default=None,
                   help="seconds of minimisation per finding (default 120)")
    r.add_argument("--minimize-share", type=_positive_float, default=None,
                   help="most of the worker time that minimisation may take (default 0.25)")
    r.add_argument("--case-timeout", type=_positive_float, default=None,
                   help="seconds before a whole case counts as hung (default 300)")
    r.add_argument("--compile-timeout", type=_positive_float, default=None,
                   help="seconds any one compilation may take before the case counts as hung (default 150)")
    r.add_argument("--run-timeout", type=_positive_float, default=None,
                   help="seconds any one eager or compiled run may take before the case counts as hung "
                   "(default 60)")
    r.add_argument("--memory-mb", type=_nonneg_int, default=None,
                   help="address-space cap per worker in MB (default 4096 on cpu, none on cuda; 0 = none)")
    r.add_argument("--recycle-every", type=_positive_int, default=None,
                   help="restart each worker after this many cases (default 200)")
    r.add_argument("--quiet", action="store_true", help="no live progress")
    r.add_argument("--ray", nargs="?", const="default", default=None, metavar="ADDRESS",
                   help="run the workers as Ray actors on every node of a Ray cluster (one per core, "
                   "or per GPU with --device cuda; --jobs caps the total). ADDRESS is the cluster's "
                   "HOST:PORT; without it Ray's own lookup is used (RAY_ADDRESS, a cluster started with "
                   "`ray start` here, else a new one on this machine). Needs pip install 'fuzzcomp[ray]'")

    rp = sub.add_parser("replay", help="re-run a seed or a finding and judge it again",
                        description="Re-run one case in an isolated worker. TARGET is a case seed "
                        "(as printed in findings), a finding folder or its finding.json, or a repro .py.")
    rp.add_argument("target")
    rp.add_argument("--backend", default=None, help="override the backend (default: the finding's, or inductor)")
    rp.add_argument("--original", action="store_true", help="replay the case as found, not minimised")
    rp.add_argument("--timeout", type=_positive_float, default=300.0)

    m = sub.add_parser("minimize", aliases=["minimise"], help="minimise a finding and write its repro",
                       description="Shrink a recorded finding while it keeps its bucket, then write "
                       "minimized.json, repro.py and report.md beside it. Given a repro .py file "
                       "(say one you edited by hand), shrink its source instead while it still exits 1 "
                       "with the same BUG line, and write FILE.min.py beside it.")
    m.add_argument("finding", help="a finding folder, its finding.json, or a repro .py file")
    m.add_argument("--function", default="fn", help="for a .py file: the function to shrink (default fn)")
    m.add_argument("--budget", type=_positive_float, default=120.0, help="seconds (default 120)")
    m.add_argument("--timeout", type=_positive_float, default=300.0)

    pr = sub.add_parser("promote", help="copy a finding's minimised repro into the regression corpus",
                        description="Re-run the finding's minimised repro in a fresh process and copy it "
                        "into the corpus with a '# fuzzcomp-corpus:' metadata line (status, affected torch "
                        "versions, bucket, dedup key, issue). Real torch bugs only: findings from custom "
                        "backends are refused.")
    pr.add_argument("finding", help="a minimised finding folder")
    pr.add_argument("--issue", default=None, help="the upstream issue URL")
    pr.add_argument("--torch", default=None, dest="torch_spec",
                    help="affected torch versions, e.g. '>=2.11,<2.14' (default: >= the running version)")
    pr.add_argument("--status", choices=("open", "fixed"), default="open")
    pr.add_argument("--trust-status", action="store_true",
                    help="don't re-run the repro here; rely on the fresh-process check made where it was "
                    "found (for a CUDA finding promoted from a machine without a GPU)")
    pr.add_argument("--corpus", default=None, help="corpus folder (default: $FUZZCOMP_CORPUS or ./corpus "
                    "of the fuzzcomp checkout)")

    rep = sub.add_parser("report", help="summarise a campaign folder",
                         description="Rebuild summary.md, summary.json and report.html from what is on disk.")
    rep.add_argument("folder")
    rep.add_argument("--json", action="store_true", help="print the summary as JSON")

    b = sub.add_parser("bench", help="measure throughput, cost by phase and recall on a fixed seed set",
                       description="Run a fixed seed set in this process (with timers around each "
                       "phase) and through an isolated worker; optionally a short campaign (buckets "
                       "per hour) and recall on the planted-fault backends. Prints tables and writes JSON.")
    b.add_argument("--seeds", type=_positive_int, default=40, help="number of seeds (default 40)")
    b.add_argument("--first-seed", type=_nonneg_int, default=0, help="first seed (default 0)")
    b.add_argument("--backend", default="inductor",
                   help="a registered torch.compile backend name, or module:function")
    b.add_argument("--json", default="bench.json", help="where the JSON result goes (default ./bench.json)")
    b.add_argument("--no-isolated", action="store_true", help="skip the isolated-worker pass")
    b.add_argument("--campaign-minutes", type=_positive_float, default=None,
                   help="also run `fuzzcomp run` this long and report buckets per hour")
    b.add_argument("--campaign-backend", default="inductor", help="backend of that campaign (default inductor)")
    b.add_argument("--campaign-jobs", type=_positive_int, default=1)
    b.add_argument("--recall", default=None, metavar="NAMES",
                   help="'all' or a comma list of fuzzcomp.planted backends: time to first detection of each")
    b.add_argument("--recall-cases", type=_positive_int, default=40, help="case budget per planted backend")
    b.add_argument("--case-timeout", type=_positive_float, default=60.0)
    b.add_argument("--workdir", default=None, help="folder for the campaign outputs (default: a temp folder)")
    b.add_argument("--dynamic", choices=("as-generated", "none", "true", "false"), default="as-generated",
                   help="override each case's torch.compile dynamic= (to measure the recompile cost)")
    b.add_argument("--profile", default=None, metavar="FILE", help="write cProfile stats of the in-process loop")

    sh = sub.add_parser("show", help="print the program and call schedule for a seed")
    sh.add_argument("seed", type=_nonneg_int)

    st = sub.add_parser("stats", help="histogram of ops and features over many seeds",
                        description="Generate seeds FIRST..FIRST+N-1 and print how often each op family, "
                        "torch callable, input dtype, layout, rank and size occurs; then run each case "
                        "eager once (no compile) and print the eager-valid rate.")
    st.add_argument("--seeds", type=_positive_int, default=1000, help="how many seeds (default 1000)")
    st.add_argument("--first", type=_nonneg_int, default=0, help="first seed (default 0)")
    st.add_argument("--top", type=_nonneg_int, default=40, help="callables to list, 0 for all (default 40)")
    st.add_argument("--no-run", action="store_true", help="only the histogram, skip the eager-valid rate")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            build_parser().print_help()
            return EXIT_USAGE
        from . import commands
        return getattr(commands, "cmd_" + args.command.replace("minimise", "minimize"))(args)
    except UsageError as e:
        print(f"fuzzcomp: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("fuzzcomp: interrupted", file=sys.stderr)
        return 130

