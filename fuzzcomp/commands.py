"""The bodies of the CLI subcommands.

Contract: each ``cmd_*`` takes the parsed arguments and returns an exit code
from ``fuzzcomp.exitcodes``; user mistakes are raised as ``cli.UsageError``
(one line, exit 2), a broken harness or environment as ``cli.HarnessError``
(one line, exit 3) after the command has done and printed what it could.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from . import exitcodes
from .cli import HarnessError, UsageError


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

    old = _resumed_settings(resume_dir or (args.out if args.resume is True else None))

    def pick(flag, key, default=None):
        if flag is not None:
            return flag
        if key in old:  # resuming: the campaign's own settings come before the settings file
            return old[key]
        return fileset.get(key, default)

    hours, minutes = pick(args.hours, "hours"), pick(args.minutes, "minutes")
    if args.hours is not None or args.minutes is not None:  # a budget flag replaces the file's budget
        hours, minutes = args.hours, args.minutes
    for name, v in (("hours", hours), ("minutes", minutes), ("cases", fileset.get("cases"))):
        if v is not None and not v > 0:
            raise UsageError(f"{name} must be positive, got {v}")
    seconds = (hours or 0) * 3600 + (minutes or 0) * 60 if (hours or minutes) else None
    if old and args.hours is None and args.minutes is None:  # resume alone: what is left of the budget
        seconds = old.get("remaining_s")
        if seconds is not None and seconds <= 0 and pick(args.cases, "cases") is None:
            raise UsageError(f"the time budget of {resume_dir or args.out} is spent: give more with "
                             "--minutes, --hours or --cases")
    if old and args.cases is None and "cases" not in old:
        old["cases"] = None
    from .config import default_jobs, default_timeouts, parse_symptoms
    symptoms = None
    if getattr(args, "symptoms", None) is not None:
        try:
            symptoms = parse_symptoms(args.symptoms)
        except ValueError as e:
            raise UsageError(str(e)) from None
    mode = pick(args.mode, "mode")
    case_timeout, compile_timeout = default_timeouts(mode)
    out = resume_dir or pick(args.out, "out")
    if not out:
        from .store import StoreError, claim_new_folder
        try:
            out = claim_new_folder()  # unique: two runs started in the same second never share one
        except (OSError, StoreError) as e:
            raise UsageError(f"cannot create a campaign folder under reports/: {e}") from None
    device = pick(args.device, "device", "cpu")
    memory = pick(args.memory_mb, "memory_mb", DEFAULT_MEMORY_MB if device == "cpu" else 0)
    cfg = RunConfig(out=out, seconds=seconds, cases=pick(args.cases, "cases"), seed=pick(args.seed, "seed", 0),
                    jobs=pick(args.jobs, "jobs", 0 if args.ray is not None else default_jobs(device)),
                    ray=args.ray if args.ray is not None else old.get("ray"), device=device,
                    max_findings=pick(getattr(args, "max_findings", None), "max_findings"),
                    symptoms=symptoms if symptoms is not None else
                    (tuple(old["symptoms"]) if old.get("symptoms") else None),
                    backend=pick(args.backend, "backend", "inductor"), mode=mode,
                    minimize=not args.no_minimize and pick(None, "minimize", True),
                    minimize_budget_s=pick(args.minimize_budget, "minimize_budget", 120.0),
                    minimize_share=pick(args.minimize_share, "minimize_share", 0.25),
                    case_timeout_s=pick(args.case_timeout, "case_timeout", case_timeout),
                    compile_timeout_s=pick(args.compile_timeout, "compile_timeout", compile_timeout),
                    run_timeout_s=pick(args.run_timeout, "run_timeout", 60.0), memory_mb=memory,
                    max_minimize_per_bucket=pick(None, "max_minimize_per_bucket", 2),
                    recycle_every=pick(args.recycle_every, "recycle_every", 200),
                    generator=_generator_settings(args, fileset, old.get("generator")),
                    feedback=pick(getattr(args, "feedback", None), "feedback", "off"),
                    half_rounding=pick(args.half_rounding, "half_rounding", "fp64"))
    return validate(cfg), args.resume is not None


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [w.strip() for w in text.split(",") if w.strip()]


def _generator_settings(args, fileset: dict, resumed: dict | None = None) -> dict:
    """[generator] and [ops] from the file (or, on resume, the campaign's own generator settings),
    with --ops/--families/--exclude over them."""
    from .settings_file import ops_as_generator
    if resumed is not None:
        gen = dict(resumed)
    else:
        gen = dict(fileset.get("generator", {}))
        gen.update(ops_as_generator(fileset.get("ops", {})))
    for key in ("ops", "families", "exclude"):
        flag = _names(getattr(args, key, None))
        if flag is not None:
            if not flag:
                raise UsageError(f"--{key} needs at least one name")
            gen[key] = flag
    return gen


def _ci_outputs(args, summary: dict) -> None:
    from .ci_report import write_junit, write_sarif
    for path, write in ((getattr(args, "junit_xml", None), write_junit), (getattr(args, "sarif", None), write_sarif)):
        if path:
            try:
                write(summary, Path(path))
            except OSError as e:
                raise HarnessError(f"cannot write {path}: {e.strerror or e}") from None
            print(f"wrote {path}")


def _check_writable(flag: str, path: str | None) -> None:
    if path and not os.access(Path(path).resolve().parent, os.W_OK):
        raise UsageError(f"{flag} {path}: {Path(path).resolve().parent} is not a writable folder")


def _resumed_settings(folder) -> dict:
    """The settings a campaign folder was started with, under the settings-file names, plus what
    is left of its time budget (``remaining_s``), so `run --resume DIR` alone continues it."""
    if not folder or not (Path(folder) / "campaign.json").exists():
        return {}
    from .store import Store
    meta = Store(Path(folder)).meta()  # StoreError (corrupt) -> one line, exit 2
    c = meta.get("config") or {}
    names = {"seed": "seed", "jobs": "jobs", "device": "device", "backend": "backend", "mode": "mode",
             "minimize_budget_s": "minimize_budget", "minimize_share": "minimize_share",
             "case_timeout_s": "case_timeout", "compile_timeout_s": "compile_timeout",
             "run_timeout_s": "run_timeout", "memory_mb": "memory_mb", "recycle_every": "recycle_every",
             "max_minimize_per_bucket": "max_minimize_per_bucket", "generator": "generator",
             "cases": "cases", "max_findings": "max_findings", "minimize": "minimize",
             "feedback": "feedback"}
    old = {key: c[name] for name, key in names.items() if name in c and c[name] is not None}
    for k in ("ray", "symptoms"):
        if c.get(k) is not None:
            old[k] = c[k]
    budget = meta.get("budget") or {}
    if budget.get("remaining_s") is not None:
        old["remaining_s"] = float(budget["remaining_s"])
    elif c.get("seconds") is not None:  # the campaign process died before saving what was left
        old["remaining_s"] = float(c["seconds"])
    return old


def cmd_run(args) -> int:
    from .campaign import CampaignError, run_campaign
    from .progress import Progress
    from .report import render_text
    from .targets import remember_campaign
    _check_writable("--junit-xml", args.junit_xml)
    _check_writable("--sarif", args.sarif)
    try:
        cfg, resume = run_config(args)
        remember_campaign(cfg.out)
        with Progress(cfg.seconds, cfg.cases, quiet=args.quiet) as progress:
            summary = run_campaign(cfg, progress, resume=resume)
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    except CampaignError as e:  # a disk write failed, the workers died: the harness, not the user
        raise HarnessError(str(e)) from None
    print(render_text(summary))
    print(f"summary: {Path(cfg.out) / 'summary.md'}\nreport:  {Path(cfg.out) / 'report.html'}")
    _ci_outputs(args, summary)
    if (summary.get("stop_reason") or "").startswith("signal"):
        print(f"stopped by {summary['stop_reason']}; continue with: fuzzcomp run --resume {cfg.out}",
              file=sys.stderr)
        return exitcodes.INTERRUPTED
    return exitcodes.BUG if summary.get("findings") else exitcodes.CLEAN


def _load_target_case(target: str, original: bool, campaign: str | None = None):
    from fuzzcomp.generators import generate
    from .store import StoreError, case_from_json, load_finding
    from .targets import find_finding
    if target.isdigit():
        return generate(int(target)), None
    path = find_finding(target, campaign) / "finding.json"
    data = load_finding(path)
    mini = path.parent / "minimized.json"
    if mini.exists() and not original:
        import json
        try:
            return case_from_json(json.loads(mini.read_text())["case"]), data
        except (ValueError, KeyError, StoreError) as e:
            raise UsageError(f"{mini} is corrupt ({e}); use --original") from None
    return data["case_obj"], data


def _trace_env(trace: str | None) -> dict | None:
    """TORCH_TRACE for the processes this replay starts (the worker, or the repro)."""
    if not trace:
        return None
    try:
        Path(trace).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--trace {trace}: cannot create the folder: {e.strerror or e}") from None
    os.environ["TORCH_TRACE"] = str(Path(trace).resolve())
    return dict(os.environ)


def _trace_note(trace: str | None) -> None:
    if trace:
        n = sum(1 for _ in Path(trace).glob("*.log"))
        print(f"TORCH_TRACE: {n} log file(s) in {trace}; read them with: tlparse {trace}")


def cmd_replay(args) -> int:
    if args.target.endswith(".py"):
        from .targets import run_repro_file
        if not Path(args.target).is_file():
            raise UsageError(f"no such file: {args.target}")
        from .shortrepro import case_from_text
        try:
            embedded = case_from_text(Path(args.target).read_text(errors="replace"))
        except Exception:  # a damaged case line: let the file judge itself
            embedded = None
        if embedded is None:  # a hand-written file: it judges itself
            code, line = run_repro_file(Path(args.target), env=_trace_env(args.trace))
            _trace_note(args.trace)
            if code == exitcodes.HARNESS:
                raise HarnessError(line)
            if code == exitcodes.USAGE:
                raise UsageError(line)
            return code
        args.embedded_case = embedded  # a generated repro: judged again with the full oracle
        _trace_env(args.trace)
    from fuzzcomp.generators import emit
    from .backends import BackendError, resolve_backend
    from .pipeline import probe_keys
    from .worker import Worker, WorkerSettings
    try:
        if getattr(args, "embedded_case", None) is not None:
            from .store import case_from_json
            case = case_from_json(args.embedded_case)
        else:
            case, _ = _load_target_case(args.target, args.original, args.campaign)
        if args.backend:
            resolve_backend(args.backend)
            case = case.with_compile(backend=args.backend)
        else:
            try:
                resolve_backend(case.compile.backend)
            except BackendError as e:  # the finding's own backend: this environment lacks it
                raise HarnessError(f"{e} (the finding was recorded with it: put its module on "
                                   "PYTHONPATH, or replay with --backend)") from None
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    if case.compile.device == "cuda":
        from .targets import cuda_usable
        if not cuda_usable():
            raise HarnessError(f"{args.target} is a CUDA case and this machine has no usable CUDA device")
    print(emit(case.program))
    print(f"calls: {[c.sizes for c in case.calls]}  compile: {case.compile}")
    _trace_env(args.trace)
    worker = Worker(0, WorkerSettings())
    try:
        valid, keys, verdicts = probe_keys(worker, case, args.timeout)
    except (OSError, RuntimeError, EOFError) as e:  # the worker itself broke, not the case
        raise HarnessError(f"the replay worker failed: {type(e).__name__}: {e}") from None
    finally:
        worker.stop()
    _trace_note(args.trace)
    if not valid:
        print("eager fails on this case: nothing to judge")
        return exitcodes.CLEAN
    for v in verdicts:
        print(f"{v.symptom}/{v.stage} [{v.oracle}] call {v.call}: {v.detail}")
    print("no discrepancy" if not verdicts else f"{len(verdicts)} discrepancies")
    return exitcodes.BUG if verdicts else exitcodes.CLEAN


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
    try:
        write_atomic(out, text)
    except OSError as e:
        sys.stdout.write(text)
        raise HarnessError(f"cannot write {out}: {e.strerror or e} (the minimised source is printed above)") \
            from None
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
    from .targets import find_finding
    from .worker import Worker, WorkerSettings
    path = find_finding(args.finding, args.campaign)
    if not os.access(path, os.W_OK):  # nothing to gain from minutes of shrinking that cannot be saved
        raise HarnessError(f"{path} is not writable: the minimised case, repro and report would be lost")
    store = Store(path.parent.parent)
    store.findings_dir = path.parent
    worker = Worker(0, WorkerSettings())
    try:
        info = finish_finding(store, path.name, worker, minimize=True, budget_s=args.budget,
                              timeout_s=args.timeout)
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise HarnessError(f"cannot write into {path}: {e.strerror or e}") from None
    finally:
        worker.stop()
    print(f"minimised in {info.get('minimize_s')} s with {info.get('probes')} probes")
    print(f"repro: {path / 'repro.py'} (exit {info.get('repro_exit')}: {info.get('repro_says')}; "
          f"failed in {info.get('confirm_runs', '-')} fresh processes"
          f"{', flaky' if info.get('flaky') else ''})")
    print(f"report: {path / 'report.md'}")
    _refresh_campaign(path.parent.parent)
    return exitcodes.CLEAN


def _refresh_campaign(root: Path) -> None:
    """A finding minimised after its campaign shows in that campaign's summaries at once."""
    if not (root / "campaign.json").is_file():
        return
    from .html_report import write_html
    from .report import write_summary
    from .store import Store
    try:
        store = Store(root)
        write_html(store, write_summary(store))
    except (OSError, *_user_errors()) as e:
        print(f"fuzzcomp: warning: could not rebuild the summary in {root}: {e}", file=sys.stderr)
        return
    print(f"summary: {root / 'summary.md'} (rebuilt)")


def cmd_promote(args) -> int:
    from .corpus import CorpusError, default_corpus_dir, promote
    from .corpus_meta import corpus_run_hint, existing_entry, set_issue
    from .pipeline import run_repro
    from .targets import find_finding
    path = find_finding(args.finding, args.campaign)
    corpus = Path(args.corpus) if args.corpus else default_corpus_dir()
    if not corpus.is_dir():
        raise UsageError(f"no corpus folder at {corpus}: pass --corpus DIR")
    try:
        already = existing_entry(path, corpus)
    except CorpusError as e:
        raise UsageError(str(e)) from None
    if already is not None and args.issue:
        try:
            set_issue(already, args.issue)
        except OSError as e:
            raise HarnessError(f"cannot update {already}: {e.strerror or e}") from None
        print(f"updated: {already} (issue={args.issue})")
        return exitcodes.CLEAN
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
    except OSError as e:
        raise HarnessError(f"cannot write into {corpus}: {e.strerror or e}") from None
    print(f"promoted: {target}")
    print(f"run the corpus: {corpus_run_hint(corpus)}")
    return exitcodes.CLEAN


def cmd_report(args) -> int:
    import json
    from .html_report import write_html
    from .report import damage_counts, damage_lines, render_text, summarise, write_summary
    from .store import Store
    if not Path(args.folder).is_dir():
        raise UsageError(f"no such folder: {args.folder}")
    _check_writable("--junit-xml", args.junit_xml)
    _check_writable("--sarif", args.sarif)
    store = Store(Path(args.folder))
    try:
        s = summarise(store)
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    print(json.dumps(s, indent=1) if args.json else render_text(s))
    written = None
    try:
        write_summary(store, s)
        write_html(store, s)
        if not args.json:
            print(f"report: {Path(args.folder) / 'report.html'}")
    except OSError as e:
        written = f"cannot write the summary into {args.folder}: {e.strerror or e} (the summary above is complete)"
    _ci_outputs(args, s)
    damage = damage_lines(s)
    for line in damage:
        print(f"fuzzcomp: warning: {line}", file=sys.stderr)
    if written:
        raise HarnessError(written)
    if damage:
        raise HarnessError(f"{args.folder} is damaged ({damage_counts(s)}; named above): the summary "
                           "above counts only what could be read")
    return exitcodes.BUG if s.get("findings") else exitcodes.CLEAN


def cmd_recheck(args) -> int:
    from .recheck import RecheckError, exit_code, recheck, render
    try:
        summary = recheck(Path(args.folder), args.python, args.timeout, args.jobs)
    except RecheckError as e:
        raise UsageError(str(e)) from None
    print(render(summary))
    return exit_code(summary)


def cmd_show(args) -> int:
    from fuzzcomp.generators import emit
    from .store import StoreError
    if args.seed.isdigit():
        case, data = _load_target_case(args.seed, False)
    else:
        try:
            case, data = _load_target_case(args.seed, False, args.campaign)
        except StoreError as e:
            raise UsageError(str(e)) from None
        b = data["bucket_obj"]
        print(f"# finding {data.get('id')}: {b.symptom}/{b.stage}  bucket {b.slug()}  seed {case.seed}")
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
    return exitcodes.CLEAN


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
    if not os.access(json_dir, os.W_OK) or (Path(args.json).exists() and not os.access(args.json, os.W_OK)):
        raise UsageError(f"--json {args.json}: {json_dir} is not writable (pick another --json path)")
    opts = BenchOptions(seeds=args.seeds, first_seed=args.first_seed, backend=args.backend,
                        isolated=not args.no_isolated, campaign_minutes=args.campaign_minutes or 0.0,
                        campaign_backend=args.campaign_backend, campaign_jobs=args.campaign_jobs,
                        recall=recall, recall_cases=args.recall_cases, case_timeout_s=args.case_timeout,
                        workdir=args.workdir, profile=args.profile, dynamic=args.dynamic)
    result = run_bench(opts, say=lambda msg: print(f"bench: {msg}", file=sys.stderr, flush=True))
    render(result)
    try:
        write_result(result, args.json)
    except OSError as e:
        raise HarnessError(f"cannot write {args.json}: {e.strerror or e} (the tables above are complete)") from None
    print(f"bench: wrote {args.json}")
    return exitcodes.CLEAN


def cmd_doctor(args) -> int:
    from .doctor import run_doctor
    return run_doctor(args.backend, args.device)


def cmd_bisect(args) -> int:
    from .bisector import run_bisect
    return run_bisect(args)
