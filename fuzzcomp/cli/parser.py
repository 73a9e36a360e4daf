"""The ``fuzzcomp`` command line: run, replay, minimize, promote, link, known, report, show, stats,
bench, doctor, bisect.

Contract: every command exits with a code from ``fuzzcomp.base.exitcodes``: 0 clean
(nothing wrong found), 1 a bug or findings (``run`` with findings, ``replay``
and ``bisect`` while the bug shows), 2 a user mistake (bad flag or value,
unknown backend, missing or broken input file), 3 the harness or the
environment is broken (a repro that cannot run here, an unwritable or
damaged campaign folder), 130 interrupted. Every 2 and 3 ends with one line
``fuzzcomp: error: ...`` on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import sys
import os

from fuzzcomp import __version__
from fuzzcomp.base import exitcodes
from fuzzcomp.base.errors import HarnessError, UsageError  # noqa: F401  (re-exported)

EXIT_USAGE = exitcodes.USAGE


class _Parser(argparse.ArgumentParser):
    """One-line usage errors; an epilog may be a function, called only when help is printed (the
    generator's settings import torch, which a usage error or a plain run's parse must not wait for)."""

    def error(self, message):  # one line, exit 2
        raise UsageError(message)

    def format_help(self):
        if callable(self.epilog):
            self.epilog = self.epilog()
        return super().format_help()


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
                "programs, eager vs compiled, minimised standalone repros.",
                epilog="exit codes: 0 clean, 1 bug/findings, 2 usage error, 3 harness or environment "
                "broken, 130 interrupted")
    p.add_argument("--version", action="version", version=f"fuzzcomp {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    r = sub.add_parser("run", help="run a fuzzing campaign",
                       description="Generate programs, run each eager and compiled in isolated workers, "
                       "record every discrepancy, minimise it and write a repro. Give a budget with "
                       "--hours, --minutes or --cases (they combine: whichever ends first). Settings "
                       "also come from ./fuzzcomp.toml or [tool.fuzzcomp] in ./pyproject.toml (flags win). "
                       "Exit 0: budget spent, no findings; 1: findings recorded; 2: bad input; 3: the "
                       "harness broke (a disk write failed, workers died); 130: stopped by "
                       "Ctrl-C/SIGTERM (all saved).", formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog=_generator_help)
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
    r.add_argument("--feedback", default=None, metavar="off|on",
                   help="on: keep programs that reach new compiler signals and mutate their choice "
                   "streams for part of the cases (default off)")
    r.add_argument("--novelty", default=None, metavar="off|on",
                   help="on: draw less of the ops, capabilities and structures that known bugs "
                   "(the registry's, and this campaign's confirmed ones) need, and reward new bugs "
                   "first in --feedback on (default off)")
    r.add_argument("--ops", default=None, metavar="NAMES",
                   help="draw only these ops (comma list of registry names or callables, e.g. "
                   "torch.add,Tensor.mul_; `fuzzcomp stats --no-run --top 0` lists them). Structural "
                   "statements (control flow, module parameters) keep their own few fixed ops")
    r.add_argument("--families", default=None, metavar="NAMES",
                   help="draw only ops of these families (comma list, e.g. pointwise,view)")
    r.add_argument("--exclude", default=None, metavar="NAMES",
                   help="never draw these ops or families (comma list)")
    r.add_argument("--junit-xml", default=None, metavar="FILE",
                   help="also write the findings as JUnit XML (one failing test per bucket) for CI")
    r.add_argument("--sarif", default=None, metavar="FILE",
                   help="also write the findings as SARIF 2.1.0 for code-scanning dashboards")
    r.add_argument("--max-findings", type=_positive_int, default=None, metavar="N",
                   help="stop generating after N findings, then minimise them (also a budget on its own)")
    r.add_argument("-x", "--exitfirst", action="store_const", const=1, dest="max_findings",
                   help="stop at the first finding (--max-findings 1)")
    r.add_argument("--symptoms", default=None, metavar="LIST",
                   help="record only these symptom classes, a comma list of: numeric, gradient, mutation, "
                   "aliasing, recompile, compile-crash, runtime-crash, error-parity, hang, segfault")
    r.add_argument("--ray", nargs="?", const="default", default=None, metavar="ADDRESS",
                   help="run the workers as Ray actors on every node of a Ray cluster (one per core, "
                   "or per GPU with --device cuda; --jobs caps the total). ADDRESS is the cluster's "
                   "HOST:PORT; without it Ray's own lookup is used (RAY_ADDRESS, a cluster started with "
                   "`ray start` here, else a new one on this machine). Needs pip install 'fuzzcomp[ray]'")

    rp = sub.add_parser("replay", help="re-run a seed or a finding and judge it again",
                        description="Re-run one case in an isolated worker. TARGET is a case seed "
                        "(as printed in findings), a finding id as `fuzzcomp run` prints it, a finding folder "
                        "or its finding.json, or a repro .py. Exit 0: no discrepancy; 1: the bug shows; 3: "
                        "the repro or the harness cannot run here (syntax error, missing module, no CUDA).")
    rp.add_argument("target")
    rp.add_argument("--campaign", default=None, metavar="DIR",
                    help="campaign folder to look a finding id up in (default: recent campaigns, ./reports)")
    rp.add_argument("--trace", default=None, metavar="DIR",
                    help="write TORCH_TRACE logs of this replay to DIR (read them with `tlparse DIR`)")
    rp.add_argument("--backend", default=None, help="override the backend (default: the finding's, or inductor)")
    rp.add_argument("--original", action="store_true", help="replay the case as found, not minimised")
    rp.add_argument("--timeout", type=_positive_float, default=300.0)

    m = sub.add_parser("minimize", aliases=["minimise"], help="minimise a finding and write its repro",
                       description="Shrink a recorded finding while it keeps its bucket, then write "
                       "minimized.json, repro.py and report.md beside it. Given a repro .py file "
                       "(say one you edited by hand), shrink its source instead while it still exits 1 "
                       "with the same BUG line, and write FILE.min.py beside it.")
    m.add_argument("finding", help="a finding id, folder, its finding.json, or a repro .py file")
    m.add_argument("--campaign", default=None, metavar="DIR", help="campaign folder for a finding id")
    m.add_argument("--function", default="fn", help="for a .py file: the function to shrink (default fn)")
    m.add_argument("--budget", type=_positive_float, default=120.0, help="seconds (default 120)")
    m.add_argument("--timeout", type=_positive_float, default=300.0)

    pr = sub.add_parser("promote", help="copy a finding's minimised repro into the regression corpus",
                        description="Re-run the finding's minimised repro in a fresh process and copy it "
                        "into the corpus with a '# fuzzcomp-corpus:' metadata line (status, affected torch "
                        "versions, bucket, dedup key, issue). Real torch bugs only: findings from custom "
                        "backends are refused. On a finding already in the corpus, --issue URL updates its "
                        "metadata line instead.")
    pr.add_argument("finding", help="a minimised finding (id or folder)")
    pr.add_argument("--campaign", default=None, metavar="DIR", help="campaign folder for a finding id")
    pr.add_argument("--issue", default=None, help="the upstream issue URL")
    pr.add_argument("--torch", default=None, dest="torch_spec",
                    help="affected torch versions, e.g. '>=2.11,<2.14' (default: >= the running version)")
    pr.add_argument("--status", choices=("open", "fixed"), default="open")
    pr.add_argument("--trust-status", action="store_true",
                    help="don't re-run the repro here; rely on the fresh-process check made where it was "
                    "found (for a CUDA finding promoted from a machine without a GPU)")
    pr.add_argument("--corpus", default=None, help="corpus folder (default: $FUZZCOMP_CORPUS or ./corpus "
                    "of the fuzzcomp checkout)")

    ln = sub.add_parser("link", help="record that a finding's bucket is a known bug (an upstream issue)",
                        description="Add the finding's bucket to the known-bug registry (corpus/known_bugs.json): "
                        "to the entry of --issue, or of --id, or as a new entry. The next campaign labels it "
                        "known and does not minimise it again; `fuzzcomp report` shows it at once.")
    ln.add_argument("finding", help="a finding id or folder, or a bucket slug")
    ln.add_argument("--issue", default=None, metavar="URL", help="the upstream issue")
    ln.add_argument("--id", default=None, metavar="ENTRY", help="a registry entry to add the bucket to")
    ln.add_argument("--state", choices=("open", "closed"), default=None, help="the issue's state")
    ln.add_argument("--fixed-in", default=None, metavar="VERSION", help="first torch release without the bug")
    ln.add_argument("--campaign", default=None, metavar="DIR", help="campaign folder for a finding id")
    ln.add_argument("--pin", action="store_true", help="add the bucket even where an entry's rule already "
                    "claims the finding (its bucket id is shared by every finding with the same symptom, stage "
                    "and signature)")
    ln.add_argument("--corpus", default=None, help="corpus folder holding known_bugs.json (default: "
                    "$FUZZCOMP_CORPUS or ./corpus of the fuzzcomp checkout)")
    kn = sub.add_parser("known", help="list the known-bug registry",
                        description="One line per known bug: its state upstream, the next step, the buckets it "
                        "has shown up under and its corpus repro.")
    kn.add_argument("--torch", default=None, metavar="VERSION", help="judge fixed-in against this torch")
    kn.add_argument("--corpus", default=None, help="corpus folder holding known_bugs.json")

    rep = sub.add_parser("report", help="summarise a campaign folder",
                         description="Rebuild summary.md, summary.json and report.html from what is on disk. "
                         "Exit 0: no findings; 1: findings; 3: the folder is damaged (unreadable findings, "
                         "torn event lines: each named) or cannot be written.")
    rep.add_argument("folder")
    rep.add_argument("--json", action="store_true", help="print the summary as JSON")
    rep.add_argument("--junit-xml", default=None, metavar="FILE", help="also write JUnit XML (one test per bucket)")
    rep.add_argument("--sarif", default=None, metavar="FILE", help="also write SARIF 2.1.0")

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

    rc = sub.add_parser("recheck", help="re-run every bucket's repro under another interpreter",
                        description="Run each bucket's repro.py under PYTHON (e.g. a venv with torch "
                        "nightly) and mark it fixed (exit 0), still-shows (1) or broken; the result goes "
                        "to findings/<id>/recheck.json and DIR/recheck.json.")
    rc.add_argument("folder")
    rc.add_argument("--python", required=True, help="the interpreter to run the repros with")
    rc.add_argument("--timeout", type=_positive_float, default=600.0, help="seconds per repro (default 600)")
    rc.add_argument("--jobs", type=_positive_int, default=1, help="repros run at once (default 1)")

    sh = sub.add_parser("show", help="print the program and call schedule for a seed or a finding")
    sh.add_argument("seed", metavar="SEED|FINDING", help="a case seed, a finding id, or a finding folder")
    sh.add_argument("--campaign", default=None, metavar="DIR", help="campaign folder for a finding id")

    st = sub.add_parser("stats", help="histogram of ops and features over many seeds",
                        description="Generate seeds FIRST..FIRST+N-1 and print each generator capability "
                        "with its weight and the share of cases having it, then how often each op family, "
                        "feature, torch callable, input dtype, layout, rank and size occurs; unless --no-run, "
                        "run each case eager once (no compile) first and print the eager-valid rate, overall "
                        "and per capability.")
    st.add_argument("--seeds", type=_positive_int, default=1000, help="how many seeds (default 1000)")
    st.add_argument("--first", type=_nonneg_int, default=0, help="first seed (default 0)")
    st.add_argument("--top", type=_nonneg_int, default=40, help="callables to list, 0 for all (default 40)")
    st.add_argument("--no-run", action="store_true", help="only the histogram, skip the eager-valid rate")
    st.add_argument("--novelty", action="store_true",
                    help="the histogram under --novelty on: what the known-bug registry lowers and why, and "
                    "how often programs draw each known trigger, plain against steered")

    d = sub.add_parser("doctor", help="check torch, triton, the C++ toolchain, GPUs, Ray and a backend",
                       description="Check what a campaign needs and print one line per check. Exit 0: all "
                       "required checks pass; 3: one fails (the line says which and what to do).")
    d.add_argument("--backend", default="inductor", help="backend to check (default inductor)")
    d.add_argument("--device", choices=("cpu", "cuda"), default="cpu")

    bi = sub.add_parser("bisect", help="narrow an Inductor finding down to a backend stage and pass",
                        description="Run torch._inductor.compiler_bisector.CompilerBisector (torch 2.11+) on "
                        "a finding's repro: each probe runs the repro in a fresh process. Prints the backend, "
                        "subsystem and, where it gets that far, the bisection number. Exit 1: narrowed; 0: "
                        "the bug does not show; 3: no bisector in this torch or the repro cannot run here. It "
                        "also exits 1, with a line 'bisect: not narrowed ...', when the bug still shows but it "
                        "cannot be placed (no single subsystem fixes it, or --max-probes ran out).")
    bi.add_argument("finding", help="a finding id, folder, or repro .py")
    bi.add_argument("--campaign", default=None, metavar="DIR", help="campaign folder for a finding id")
    bi.add_argument("--timeout", type=_positive_float, default=600.0, help="seconds per probe (default 600)")
    bi.add_argument("--max-probes", type=_positive_int, default=40, metavar="N",
                    help="stop after N probes and say it was not narrowed (default 40)")
    return p


def _generator_help() -> str:
    """The generator settings a [generator] table or --ops/--families/--exclude can change."""
    try:
        import dataclasses

        from fuzzcomp.generators.build import GenConfig
        from fuzzcomp.generators.registry import FAMILIES
    except Exception:  # help must print even where the generator cannot import
        return ""
    knobs = ", ".join(f"{f.name}={f.default!r}" for f in dataclasses.fields(GenConfig)
                      if f.name not in ("ops", "families", "exclude"))
    return ("generator settings (set them in fuzzcomp.toml's [generator] table):\n  " + knobs +
            "\nop families (--families, --exclude): " + ", ".join(FAMILIES) +
            "\n[ops] in fuzzcomp.toml takes the same filters: only = [..], families = [..], exclude = [..]")


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            build_parser().print_help()
            return EXIT_USAGE
        # lazily, on purpose: the command bodies import torch and the whole pipeline, and the
        # parser alone answers --help, --version and usage errors without them
        from fuzzcomp.cli import commands
        return getattr(commands, "cmd_" + args.command.replace("minimise", "minimize"))(args)
    except UsageError as e:
        print(f"fuzzcomp: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except HarnessError as e:
        print(f"fuzzcomp: error: {e}", file=sys.stderr)
        return exitcodes.HARNESS
    except KeyboardInterrupt:
        print("fuzzcomp: interrupted", file=sys.stderr)
        return exitcodes.INTERRUPTED
    except BrokenPipeError:  # `fuzzcomp show 3 | head`: the reader left; no traceback on exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell pipeline reports it

