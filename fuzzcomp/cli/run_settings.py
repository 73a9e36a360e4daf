"""The settings of ``fuzzcomp run``: flags over the settings file over a resumed campaign's over
the defaults, merged into one validated ``RunConfig`` (``run_config``), and the checks and CI
outputs the campaign commands share.
"""
from __future__ import annotations

import os
from pathlib import Path

from fuzzcomp.base.errors import HarnessError, UsageError
from fuzzcomp.base.backends import BackendError
from fuzzcomp.base.config import (ConfigError, default_jobs, default_timeouts, parse_symptoms, RunConfig,
                                  validate)
from fuzzcomp.cli.settings_file import load_settings, ops_as_generator
from fuzzcomp.findings.store import claim_new_folder, Store, StoreError
from fuzzcomp.report.ci import write_junit, write_sarif
from fuzzcomp.workers.worker import DEFAULT_MEMORY_MB

def _user_errors():
    return (BackendError, ConfigError, StoreError)


def run_config(args):
    """Flags over the settings file over the defaults -> a validated RunConfig."""
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
        try:
            out = claim_new_folder()  # unique: two runs started in the same second never share one
        except (OSError, StoreError) as e:
            raise UsageError(f"cannot create a campaign folder under reports/: {e}") from None
    try:  # the path goes into JSON, Markdown and HTML files, all UTF-8
        os.fsdecode(out).encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"--out {ascii(os.fsdecode(out))}: the folder name holds bytes that are not UTF-8; "
                         "the reports cannot name it: choose a UTF-8 name") from None
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
                    novelty=pick(getattr(args, "novelty", None), "novelty", "off"),
                    half_rounding=pick(args.half_rounding, "half_rounding", "fp64"))
    try:
        return validate(cfg), args.resume is not None
    except ConfigError:
        drop_unused_folder(out, claimed=not (resume_dir or pick(args.out, "out")))
        raise


def drop_unused_folder(out, claimed: bool) -> None:
    """A refused run leaves no empty reports/run-* folder behind (only the one it created)."""
    if claimed:
        try:
            os.rmdir(out)  # fails, harmlessly, on a folder that holds anything
        except OSError:
            pass


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [w.strip() for w in text.split(",") if w.strip()]


def _generator_settings(args, fileset: dict, resumed: dict | None = None) -> dict:
    """[generator] and [ops] from the file (or, on resume, the campaign's own generator settings),
    with --ops/--families/--exclude over them."""
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
    meta = Store(Path(folder)).meta()  # StoreError (corrupt) -> one line, exit 2
    c = meta.get("config") or {}
    names = {"seed": "seed", "jobs": "jobs", "device": "device", "backend": "backend", "mode": "mode",
             "minimize_budget_s": "minimize_budget", "minimize_share": "minimize_share",
             "case_timeout_s": "case_timeout", "compile_timeout_s": "compile_timeout",
             "run_timeout_s": "run_timeout", "memory_mb": "memory_mb", "recycle_every": "recycle_every",
             "max_minimize_per_bucket": "max_minimize_per_bucket", "generator": "generator",
             "cases": "cases", "max_findings": "max_findings", "minimize": "minimize",
             "feedback": "feedback", "novelty": "novelty"}
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
