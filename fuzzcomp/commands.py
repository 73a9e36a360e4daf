"""The bodies of the CLI subcommands.

Contract: each ``cmd_*`` takes the parsed arguments and returns an exit code;
user mistakes are raised as ``cli.UsageError`` (one line, exit 2).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .cli import UsageError


def _user_errors():
    from .backends import BackendError
    from .config import ConfigError
    from .store import StoreError
    return (BackendError, ConfigError, StoreError)


def run_config(args):
    """Flags over the settings file over the defaults -> a validated RunConfig."""
    import time
    from .config import RunConfig, validate
    from .settings_file import load_settings
    from .worker import DEFAULT_MEMORY_MB
    fileset, _ = load_settings(args.config)
    resume_dir = args.resume if isinstance(args.resume, str) else None
    if resume_dir and args.out and Path(args.out) != Path(resume_dir):
        raise UsageError(f"--resume {resume_dir} and --out {args.out} name different folders")

    if args.resume is True and not (args.out or fileset.get("out")):
        raise UsageError("--resume needs the campaign folder: --resume DIR")
    if resume_dir and not (Path(resume_dir) / "campaign.json").exists():
        raise UsageError(f"--resume {resume_dir}: not a fuzzcomp campaign folder (no campaign.json)")

    def pick(flag, key, default=None):
        return flag if flag is not None else fileset.get(key, default)

    hours, minutes = pick(args.hours, "hours"), pick(args.minutes, "minutes")
    if args.hours is not None or args.minutes is not None:  # a budget flag replaces the file's budget
        hours, minutes = args.hours, args.minutes
    for name, v in (("hours", hours), ("minutes", minutes), ("cases", fileset.get("cases"))):
        if v is not None and not v > 0:
            raise UsageError(f"{name} must be positive, got {v}")
    seconds = (hours or 0) * 3600 + (minutes or 0) * 60 if (hours or minutes) else None
    out = resume_dir or pick(args.out, "out") or time.strftime("reports/run-%Y%m%d-%H%M%S", time.gmtime())
    device = pick(args.device, "device", "cpu")
    memory = pick(args.memory_mb, "memory_mb", DEFAULT_MEMORY_MB if device == "cpu" else 0)
    cfg = RunConfig(out=out, seconds=seconds, cases=pick(args.cases, "cases"), seed=pick(args.seed, "seed", 0),
                    jobs=pick(args.jobs, "jobs", 0 if args.ray is not None else os.cpu_count() or 1),
                    ray=args.ray, device=device,
                    backend=pick(args.backend, "backend", "inductor"), mode=pick(args.mode, "mode"),
                    minimize=not args.no_minimize and fileset.get("minimize", True),
                    minimize_budget_s=pick(args.minimize_budget, "minimize_budget", 120.0),
                    minimize_share=pick(args.minimize_share, "minimize_share", 0.25),
                    case_timeout_s=pick(args.case_timeout, "case_timeout", 300.0),
                    compile_timeout_s=pick(args.compile_timeout, "compile_timeout", 150.0),
                    run_timeout_s=pick(args.run_timeout, "run_timeout", 60.0), memory_mb=memory,
                    max_minimize_per_bucket=fileset.get("max_minimize_per_bucket", 2),
                    recycle_every=pick(args.recycle_every, "recycle_every", 200),
                    generator=dict(fileset.get("generator", {})),
                    half_rounding=pick(args.half_rounding, "half_rounding", "fp64"))
    return validate(cfg), args.resume is not None


def cmd_run(args) -> int:
    from .campaign import CampaignError, run_campaign
    from .progress import Progress
    from .report import render_text
    try:
        cfg, resume = run_config(args)
        with Progress(cfg.seconds, cfg.cases, quiet=args.quiet) as progress:
            summary = run_campaign(cfg, progress, resume=resume)
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    except CampaignError as e:
        print(f"fuzzcomp: error: {e}", file=sys.stderr)
        return 1
    print(render_text(summary))
    print(f"summary: {Path(cfg.out) / 'summary.md'}\nreport:  {Path(cfg.out) / 'report.html'}")
    if (summary.get("stop_reason") or "").startswith("signal"):
        print(f"stopped by {summary['stop_reason']}; continue with: fuzzcomp run --resume {cfg.out}",
              file=sys.stderr)
        return 130
    return 0


def _load_target_case(target: str, original: bool):
    from fuzzcomp.generators import generate
    from .store import StoreError, case_from_json, load_finding
    if target.isdigit():
        return generate(int(target)), None
    path = Path(target)
    if path.is_dir():
        path = path / "finding.json"
    if not path.exists():
        raise UsageError(f"no such file or folder: {target}")
    data = load_finding(path)
    mini = path.parent / "minimized.json"
    if mini.exists() and not original:
        import json
        try:
            return case_from_json(json.loads(mini.read_text())["case"]), data
        except (ValueError, KeyError, StoreError) as e:
            raise UsageError(f"{mini} is corrupt ({e}); use --original") from None
    return data["case_obj"], data


def cmd_replay(args) -> int:
    if args.target.endswith(".py"):
        if not Path(args.target).is_file():
            raise UsageError(f"no such file: {args.target}")
        return subprocess.call([sys.executable, args.target])
    from fuzzcomp.generators import emit
    from .backends import BackendError, resolve_backend
    from .messages import DONE, Job
    from .pipeline import probe_keys
    from .worker import Worker, WorkerSettings
    try:
        case, _ = _load_target_case(args.target, args.original)
        if args.backend:
            resolve_backend(args.backend)
            case = case.with_compile(backend=args.backend)
        else:
            resolve_backend(case.compile.backend)
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    print(emit(case.program))
    print(f"calls: {[c.sizes for c in case.calls]}  compile: {case.compile}")
    worker = Worker(0, WorkerSettings())
    try:
        valid, keys, verdicts = probe_keys(worker, case, args.timeout)
    finally:
        worker.stop()
    if not valid:
        print("eager fails on this case: nothing to judge")
        return 0
    for v in verdicts:
        print(f"{v.symptom}/{v.stage} [{v.oracle}] call {v.call}: {v.detail}")
    print("no discrepancy" if not verdicts else f"{len(verdicts)} discrepancies")
    return 1 if verdicts else 0


def _minimize_source(args) -> int:
    from .srcreduce import SourceReduceError, reduce_source
    from .store import write_atomic
    path = Path(args.finding)
    if not path.is_file():
        raise UsageError(f"no such file: {args.finding}")
    try:
        text, st = reduce_source(path, budget_s=args.budget, timeout_s=args.timeout,
                                 function=args.function, log=print)
    except SourceReduceError as e:
        raise UsageError(str(e)) from None
    out = path.with_name(path.stem + ".min.py")
    write_atomic(out, text)
    print(f"source-level reduction: {st.statements_before} -> {st.statements_after} statements in "
          f"{st.seconds:.1f} s with {st.probes} probes" + (" (budget spent)" if st.out_of_time else ""))
    print(f"interesting: exits 1 with a BUG line starting {st.expect!r}")
    print(f"minimised file: {out}  (check it alone: python -m fuzzcomp.srcreduce {out} "
          f"--expect {st.expect!r})")
    return 0


def cmd_minimize(args) -> int:
    if args.finding.endswith(".py"):
        return _minimize_source(args)
    from .pipeline import finish_finding
    from .store import Store
    from .worker import Worker, WorkerSettings
    path = Path(args.finding)
    if path.name == "finding.json":
        path = path.parent
    if not (path / "finding.json").is_file():
        raise UsageError(f"{args.finding} is not a finding folder (no finding.json)")
    store = Store(path.parent.parent)
    store.findings_dir = path.parent
    worker = Worker(0, WorkerSettings())
    try:
        info = finish_finding(store, path.name, worker, minimize=True, budget_s=args.budget,
                              timeout_s=args.timeout)
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    finally:
        worker.stop()
    print(f"minimised in {info.get('minimize_s')} s with {info.get('probes')} probes")
    print(f"repro: {path / 'repro.py'} (exit {info.get('repro_exit')}: {info.get('repro_says')})")
    print(f"report: {path / 'report.md'}")
    return 0


def cmd_promote(args) -> int:
    from .corpus import CorpusError, default_corpus_dir, promote
    from .pipeline import run_repro
    path = Path(args.finding)
    if path.name == "finding.json":
        path = path.parent
    if not (path / "finding.json").is_file():
        raise UsageError(f"{args.finding} is not a finding folder (no finding.json)")
    corpus = Path(args.corpus) if args.corpus else default_corpus_dir()
    if not corpus.is_dir():
        raise UsageError(f"no corpus folder at {corpus}: pass --corpus DIR")
    if args.torch_spec:
        from .corpus import torch_affected
        try:
            torch_affected(args.torch_spec, "0")
        except CorpusError as e:
            raise UsageError(str(e)) from None
    try:
        target = promote(path, corpus, issue=args.issue, torch_spec=args.torch_spec, status=args.status,
                         run_repro=run_repro, trust_status=args.trust_status)
    except CorpusError as e:
        raise UsageError(str(e)) from None
    print(f"promoted: {target}")
    print(f"run the corpus: pytest -n auto {corpus}")
    return 0


def cmd_report(args) -> int:
    import json
    from .html_report import write_html
    from .report import render_text, write_summary
    from .store import Store
    if not Path(args.folder).is_dir():
        raise UsageError(f"no such folder: {args.folder}")
    try:
        store = Store(Path(args.folder))
        s = write_summary(store)
        write_html(store, s)
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    print(json.dumps(s, indent=1) if args.json else render_text(s))
    if not args.json:
        print(f"report: {Path(args.folder) / 'report.html'}")
    return 0


def cmd_show(args) -> int:
    from fuzzcomp.generators import emit, generate
    case = generate(args.seed)
    print(emit(case.program))
    from .execute import call_entry
    for k, c in enumerate(case.calls):
        sizes = ", ".join(f"{s}={v}" for s, v in zip(case.program.symbols, c.sizes))
        entry = call_entry(case, c)
        state = f"  state {entry[2]}" if len(entry) > 2 else ""
        print(f"call {k}: {sizes}  value seed {c.seed}{state}")
    for i in case.program.inputs:
        print(f"input {i.name}: shape {i.type.shape} {i.type.dtype} {i.layout}")
    print(f"compile: dynamic={case.compile.dynamic} fullgraph={case.compile.fullgraph}  "
          f"generator {case.generator_version}")
    return 0


def cmd_stats(args) -> int:
    from fuzzcomp.generators.stats import histogram, render
    seeds = range(args.first, args.first + args.seeds)
    print(render(histogram(seeds), top_ops=args.top or None))
    if args.no_run:
        return 0
    from .execute import eager_validity
    valid, fp64_ok, calls, _ = eager_validity(seeds)
    print(f"eager-valid: {valid}/{args.seeds} = {100 * valid / args.seeds:.1f}%")
    if calls:
        print(f"fp64 reference ran: {fp64_ok}/{calls} calls of valid cases = {100 * fp64_ok / calls:.1f}%")
    return 0


def cmd_bench(args) -> int:
    from .backends import resolve_backend
    from .bench import BenchOptions, render, run_bench, write_result
    from .bench_campaigns import parse_planted
    try:
        resolve_backend(args.backend)
        if args.campaign_minutes:
            resolve_backend(args.campaign_backend)
        recall = parse_planted(args.recall) if args.recall is not None else ()
    except (ValueError, *_user_errors()) as e:
        raise UsageError(str(e)) from None
    json_dir = Path(args.json).resolve().parent
    if not json_dir.is_dir():
        raise UsageError(f"no such folder for --json: {json_dir}")
    opts = BenchOptions(seeds=args.seeds, first_seed=args.first_seed, backend=args.backend,
                        isolated=not args.no_isolated, campaign_minutes=args.campaign_minutes or 0.0,
                        campaign_backend=args.campaign_backend, campaign_jobs=args.campaign_jobs,
                        recall=recall, recall_cases=args.recall_cases, case_timeout_s=args.case_timeout,
                        workdir=args.workdir, profile=args.profile, dynamic=args.dynamic)
    result = run_bench(opts, say=lambda msg: print(f"bench: {msg}", file=sys.stderr, flush=True))
    render(result)
    write_result(result, args.json)
    print(f"bench: wrote {args.json}")
    return 0
