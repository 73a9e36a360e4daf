"""The bodies of the CLI subcommands that work on a case or a finding (run, replay, minimize, show,
stats, bench, doctor, bisect); the corpus and report commands are in ``corpus_commands``, the
settings merge of ``run`` in ``run_settings`` (both re-exported here for the parser).

Contract: each ``cmd_*`` takes the parsed arguments and returns an exit code
from ``fuzzcomp.base.exitcodes``; user mistakes are raised as ``cli.UsageError``
(one line, exit 2), a broken harness or environment as ``cli.HarnessError``
(one line, exit 3) after the command has done and printed what it could.
"""
from __future__ import annotations

import os
import shlex
import signal
import sys
from pathlib import Path
import json

from fuzzcomp.base import exitcodes
from fuzzcomp.base.errors import HarnessError, UsageError
from fuzzcomp.base.backends import BackendError, resolve_backend
from fuzzcomp.base.config import ConfigError
from fuzzcomp.bench.campaigns import parse_planted
from fuzzcomp.campaign.loop import CampaignError, run_campaign
from fuzzcomp.campaign.pipeline import finish_finding, probe_keys
from fuzzcomp.cli.bisect import run_bisect
from fuzzcomp.cli.doctor import backend_smoke, run_doctor
from fuzzcomp.cli.finding_lookup import cuda_usable, find_finding, remember_campaign, run_repro_file
from fuzzcomp.cli.progress import Progress
from fuzzcomp.findings.recheck import render
from fuzzcomp.findings.store import case_from_json, load_finding, Store, StoreError, write_atomic
from fuzzcomp.generators import emit, generate
from fuzzcomp.generators import GenConfig
from fuzzcomp.judge.check import eager_validity
from fuzzcomp.reduce.srcreduce import reduce_source, SourceReduceError
from fuzzcomp.render.shortrepro import case_from_text
from fuzzcomp.report.summary import render_text
from fuzzcomp.run.execute import call_entry
from fuzzcomp.workers.worker import Worker, WorkerSettings
from fuzzcomp.cli.corpus_commands import _refresh_campaign, cmd_promote, cmd_recheck, cmd_report  # noqa: F401
from fuzzcomp.cli.known_commands import cmd_known, cmd_link  # noqa: F401
from fuzzcomp.cli.run_settings import _check_writable, _ci_outputs, _user_errors, drop_unused_folder, run_config  # noqa: F401



def _refuse_settings(cfg, resume: bool) -> None:
    """Settings that would waste the campaign, refused in one line before any worker starts."""
    if cfg.mode and cfg.backend != "inductor":
        raise UsageError(f"--mode {cfg.mode} only means something to the inductor backend; backend "
                         f"{cfg.backend!r} ignores it: drop --mode, or use --backend inductor")
    if ":" in cfg.backend and not resume:  # a user's own backend: compile sin(x)+1 once, as doctor does
        status, text, bad = backend_smoke(cfg.backend, cfg.device)
        if bad:
            raise UsageError(f"{text} (`fuzzcomp doctor --backend {cfg.backend}` checks it)")
        if status == "warn":
            print(f"fuzzcomp: warning: {text}", file=sys.stderr)


def _version_warning(cfg) -> None:
    from fuzzcomp import __version__
    try:
        made = json.loads((Path(cfg.out) / "campaign.json").read_text()).get("fuzzcomp")
    except (OSError, ValueError):
        return
    if made != __version__:
        print(f"warning: {cfg.out} was made by fuzzcomp {made or 'an older version (unrecorded)'}, this is "
              f"fuzzcomp {__version__}: findings of both are mixed in one campaign", file=sys.stderr)


ALL_HANG_N = 5  # from this many cases on, nearly every one a hang finding: the timeout, not the compiler
HANG_SHARE = 0.8  # "nearly every one": a hang's finding event may land after its case's, and one
                  # cheap program may compile inside even a too-short timeout


class _SettingWastesCampaign(ConfigError):
    """Raised from the progress hook: the campaign stops (its findings and summary saved) with it."""


def _hang_guard(cfg, resume: bool):
    """A hook that stops a new campaign when, at any count of its first ``ALL_HANG_N`` to
    ``2 * ALL_HANG_N`` cases, at least ``HANG_SHARE`` of them were hang findings."""
    hangs: set = set()

    def check(event, **kw):
        if resume:
            return
        if event == "finding" and kw["key"].symptom == "hang":
            hangs.add(kw["fid"])
        elif event == "case" and ALL_HANG_N <= (n := kw["counts"].get("cases") or 0) <= 2 * ALL_HANG_N \
                and len(hangs) >= HANG_SHARE * n:
            raise _SettingWastesCampaign(
                f"{len(hangs)} of the first {n} cases hung past --compile-timeout {cfg.compile_timeout_s:g} s "
                f"/ --case-timeout {cfg.case_timeout_s:g} s: the timeout is too short for compiling here, "
                f"these are not compiler hangs (give a larger --compile-timeout)")
    return check


def cmd_run(args) -> int:
    _check_writable("--junit-xml", args.junit_xml)
    _check_writable("--sarif", args.sarif)
    try:
        cfg, resume = run_config(args)
        try:
            _refuse_settings(cfg, resume)
            if resume:
                _version_warning(cfg)
            guard = _hang_guard(cfg, resume)
            with Progress(cfg.seconds, cfg.cases, quiet=args.quiet) as progress:
                def events(event, **kw):
                    if event in ("starting", "resume"):  # the folder holds a campaign now: ids resolve
                        remember_campaign(cfg.out)
                    progress(event, **kw)
                    guard(event, **kw)
                summary = run_campaign(cfg, events, resume=resume)
        except BaseException:  # refused or failed before the campaign wrote anything
            drop_unused_folder(cfg.out, claimed=args.out is None and not resume)
            raise
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    except CampaignError as e:  # a disk write failed, the workers died: the harness, not the user
        if "the timeout is too short" in str(e):  # _hang_guard: the setting is the user's
            raise UsageError(str(e)) from None
        raise HarnessError(str(e)) from None
    print(render_text(summary))
    print(f"summary: {Path(cfg.out) / 'summary.md'}\nreport:  {Path(cfg.out) / 'report.html'}")
    _ci_outputs(args, summary)
    if (summary.get("stop_reason") or "").startswith("signal"):
        print(f"stopped by {summary['stop_reason']}; continue with: fuzzcomp run --resume {shlex.quote(cfg.out)}",
              file=sys.stderr)
        return exitcodes.INTERRUPTED
    if not summary.get("cases") and not summary.get("findings"):
        # nothing was tested: "clean" would be a lie. The budget the user gave was too small for
        # the workers to start (a usage matter: the harness is fine), so exit 2 and say what to give
        raise UsageError(f"no case ran: the budget ended before the first case finished (workers need "
                         f"several seconds to import torch); give a larger --minutes or --cases N")
    return exitcodes.BUG if summary.get("findings") else exitcodes.CLEAN


def _load_target_case(target: str, original: bool, campaign: str | None = None):
    if target.isdigit():
        return generate(int(target)), None
    path = find_finding(target, campaign) / "finding.json"
    data = load_finding(path)
    mini = path.parent / "minimized.json"
    if mini.exists() and not original:
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
        if not Path(args.target).is_file():
            raise UsageError(f"no such file: {args.target}")
        try:
            embedded = case_from_text(Path(args.target).read_text(errors="replace"))
        except Exception:  # a damaged case line: let the file judge itself
            embedded = None
        # the file judges itself first: a syntax error is a broken repro (3), and a hand-edited
        # file is what the user asks about, not the original case embedded in it
        code, line = run_repro_file(Path(args.target), env=_trace_env(args.trace))
        _trace_note(args.trace)
        if code == exitcodes.HARNESS:
            raise HarnessError(line)
        if code == exitcodes.USAGE:
            raise UsageError(line)
        if embedded is None or code == exitcodes.CLEAN:
            if embedded is not None:
                print(f"{args.target} passes as it stands ({line}); its embedded case (the program it was "
                      "generated from) was not judged: the file was edited, or the bug is fixed here")
            return code
        args.embedded_case = embedded  # a generated repro: judged again with the full oracle
        _trace_env(args.trace)
    try:
        if getattr(args, "embedded_case", None) is not None:
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
    print(f"minimised file: {out}  (check it alone: python -m fuzzcomp.reduce.srcreduce {shlex.quote(str(out))} "
          f"--expect {st.expect!r})")
    return 0


def cmd_minimize(args) -> int:
    if args.finding.endswith(".py"):
        return _minimize_source(args)
    path = find_finding(args.finding, args.campaign)
    if not os.access(path, os.W_OK):  # nothing to gain from minutes of shrinking that cannot be saved
        raise HarnessError(f"{path} is not writable: the minimised case, repro and report would be lost")
    store = Store(path.parent.parent)
    store.findings_dir = path.parent
    worker = Worker(0, WorkerSettings())
    stopped: list[str] = []

    def on_signal(signum, _frame):  # Ctrl-C / SIGTERM: end the probe, keep the best candidate so far
        if not stopped:
            stopped.append(signal.Signals(signum).name)
            print(f"stopping ({stopped[0]}): saving the smallest case found so far", file=sys.stderr)
        worker.cancel()
    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        info = finish_finding(store, path.name, worker, minimize=True, budget_s=args.budget,
                              timeout_s=args.timeout, should_stop=lambda: bool(stopped))
    except _user_errors() as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise HarnessError(f"cannot write into {path}: {e.strerror or e}") from None
    finally:
        worker.stop()
        for sig, handler in old.items():
            signal.signal(sig, handler)
    if stopped:
        print(f"minimisation stopped by {stopped[0]} after {info.get('probes')} probes; the smallest case so far "
              f"is saved: {path / 'minimized.json'}, {path / 'repro.py'} (not checked in a fresh process; "
              f"continue with: fuzzcomp minimize {shlex.quote(str(path))})", file=sys.stderr)
        _refresh_campaign(path.parent.parent)
        return exitcodes.INTERRUPTED
    print(f"minimised in {info.get('minimize_s')} s with {info.get('probes')} probes")
    print(f"repro: {path / 'repro.py'} (exit {info.get('repro_exit')}: {info.get('repro_says')}; "
          f"failed in {info.get('confirm_runs', '-')} fresh processes"
          f"{', flaky' if info.get('flaky') else ''})")
    print(f"report: {path / 'report.md'}")
    _refresh_campaign(path.parent.parent)
    return exitcodes.CLEAN


def _input_kind(i) -> str:
    """What ``show`` says of one input: an alias names its base and view (``x2``: the transposed
    view of ``x0``), a scalar its kind, a container its count; a tensor its shape and layout."""
    if i.kind == "alias":
        view = i.view.removeprefix("nonleaf:")
        return (f"{view or 'same'} view of {i.alias_of}" + (" (of a non-leaf copy of it)" if i.view.startswith("nonleaf:")
                                                             else "") + f", shape {i.type.shape} {i.type.dtype}")
    if i.kind in ("int", "float"):
        return f"Python {i.kind}"
    if i.kind in ("list", "tuple", "dict"):
        return f"{i.kind} of {i.count} tensors, each shape {i.type.shape} {i.type.dtype} {i.layout}"
    grad = " requires grad" if i.requires_grad else ""
    special = " (salted with special values)" if i.special else ""
    return f"shape {i.type.shape} {i.type.dtype} {i.layout}{grad}{special}"


def cmd_show(args) -> int:
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
    for k, c in enumerate(case.calls):
        sizes = ", ".join(f"{s}={v}" for s, v in zip(case.program.symbols, c.sizes))
        entry = call_entry(case, c)
        state = f"  state {entry[2]}" if len(entry) > 2 else ""
        print(f"call {k}: {sizes}  value seed {c.seed}{state}")
    for i in case.program.inputs:
        print(f"input {i.name}: {_input_kind(i)}")
    print(f"compile: dynamic={case.compile.dynamic} fullgraph={case.compile.fullgraph}  "
          f"generator {case.generator_version}")
    return exitcodes.CLEAN


def cmd_stats(args) -> int:
    from fuzzcomp.generators.stats import histogram, render
    seeds = range(args.first, args.first + args.seeds)
    config = GenConfig()
    if getattr(args, "novelty", False):
        from fuzzcomp.campaign.novelty import Novelty, steering_table
        steer = Novelty("on", config)
        print("\n".join(steering_table(steer, seeds)))
        config = steer.config()
    hist = histogram(seeds, config)
    if args.no_run:
        print(render(hist, top_ops=args.top or None))
        return 0
    valid, fp64_ok, calls, errors = eager_validity(seeds, config)
    print(render(hist, top_ops=args.top or None, invalid={seed for seed, _err in errors}))
    print(f"eager-valid: {valid}/{args.seeds} = {100 * valid / args.seeds:.1f}%")
    if calls:
        print(f"fp64 reference ran: {fp64_ok}/{calls} calls of valid cases = {100 * fp64_ok / calls:.1f}%")
    for seed, (etype, msg) in errors[:10]:
        print(f"  eager-invalid seed {seed}: {etype}: {msg[:160]}")
    return 0


def cmd_bench(args) -> int:
    from fuzzcomp.bench.throughput import BenchOptions, render, run_bench, write_result
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
    return run_doctor(args.backend, args.device)


def cmd_bisect(args) -> int:
    return run_bisect(args)
