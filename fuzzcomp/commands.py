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


def cmd_run(args) -> int:
    from .campaign import run_campaign
    from .config import RunConfig, validate
    from .progress import Progress
    from .report import render_text
    seconds = None
    if args.hours is not None or args.minutes is not None:
        seconds = (args.hours or 0) * 3600 + (args.minutes or 0) * 60
    cfg = RunConfig(out=args.out, seconds=seconds, cases=args.cases, seed=args.seed,
                    jobs=args.jobs or os.cpu_count() or 1, device=args.device, backend=args.backend,
                    mode=args.mode, minimize=not args.no_minimize, minimize_budget_s=args.minimize_budget,
                    case_timeout_s=args.case_timeout, memory_mb=args.memory_mb)
    try:
        validate(cfg)
        with Progress(seconds, args.cases, quiet=args.quiet) as progress:
            summary = run_campaign(cfg, progress, resume=args.resume)
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    print(render_text(summary))
    print(f"summary: {Path(args.out) / 'summary.md'}")
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
                         run_repro=run_repro)
    except CorpusError as e:
        raise UsageError(str(e)) from None
    print(f"promoted: {target}")
    print(f"run the corpus: pytest -n auto {corpus}")
    return 0


def cmd_report(args) -> int:
    import json
    from .report import render_text, write_summary
    from .store import Store
    if not Path(args.folder).is_dir():
        raise UsageError(f"no such folder: {args.folder}")
    try:
        s = write_summary(Store(Path(args.folder)))
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    print(json.dumps(s, indent=1) if args.json else render_text(s))
    return 0


def cmd_show(args) -> int:
    from fuzzcomp.generators import emit, generate
    case = generate(args.seed)
    print(emit(case.program))
    for k, c in enumerate(case.calls):
        sizes = ", ".join(f"{s}={v}" for s, v in zip(case.program.symbols, c.sizes))
        print(f"call {k}: {sizes}  value seed {c.seed}")
    for i in case.program.inputs:
        print(f"input {i.name}: shape {i.type.shape} {i.type.dtype} {i.layout}")
    print(f"compile: dynamic={case.compile.dynamic} fullgraph={case.compile.fullgraph}  "
          f"generator {case.generator_version}")
    return 0
