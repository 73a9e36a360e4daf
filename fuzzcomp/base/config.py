"""One validated, frozen run configuration.

Contract: ``RunConfig`` is built once from the command line, checked by
``validate`` (a ``ConfigError`` with a one-line reason for any bad value), and
never changed afterwards. It records everything a campaign's results depend
on, and round-trips through JSON for resume and reports.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from fuzzcomp.base.backends import BackendError, resolve_backend
from fuzzcomp.generators.build import GenConfig
from fuzzcomp.generators.registry import OpFilterError, op_filter_mask
from fuzzcomp.oracles import SYMPTOMS


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class RunConfig:
    out: str
    seconds: float | None = None     # time budget; None = unbounded (then cases must be set)
    cases: int | None = None
    seed: int = 0
    jobs: int = 1
    device: str = "cpu"
    backend: str = "inductor"
    mode: str | None = None
    minimize: bool = True
    minimize_share: float = 0.25     # at most this share of worker time goes to minimisation
    minimize_budget_s: float = 120.0 # per finding
    case_timeout_s: float = 300.0    # one case: eager, fp64, compile and compiled runs together
    compile_timeout_s: float = 150.0 # any one compilation (Dynamo + backend, forward or backward)
    run_timeout_s: float = 60.0      # any one eager, fp64 or compiled run of one call
    memory_mb: int = 0               # address-space cap per worker; 0 = none
    max_minimize_per_bucket: int = 2
    recycle_every: int = 200         # restart each worker after this many cases
    generator: dict = field(default_factory=dict)  # GenConfig overrides (from the settings file)
    ray: str | None = None           # Ray cluster address ("default": Ray's own lookup); None = local
    feedback: str = "off"            # "on": compiler-signal feedback steers generation (fuzzcomp.campaign.feedback)
    novelty: str = "off"             # "on": generation steers away from known bugs' triggers (campaign.novelty)
    max_findings: int | None = None  # stop generating after this many findings (then minimise them)
    symptoms: tuple | None = None    # record only these symptom classes; None = all
    confirm_runs: int = 3            # fresh processes a repro must fail in to count as confirmed
    max_minimizers: int | None = None  # minimisations at once; None = default_minimizers(jobs)
    half_rounding: str = "fp64"      # fp16/bf16 judging: fp64 rule, or "strict" (match eager's rounding)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "RunConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        if isinstance(kw.get("symptoms"), list):
            kw["symptoms"] = tuple(kw["symptoms"])
        return cls(**kw)


#: Modes whose compilations benchmark candidate kernels (autotuning): one compile can take
#: minutes on a GPU, so their compile and case limits start larger.
AUTOTUNE_MODES = ("max-autotune", "max-autotune-no-cudagraphs")


def default_timeouts(mode: str | None) -> tuple[float, float]:
    """(case timeout, compile timeout) in seconds for a campaign in ``mode``."""
    if mode in AUTOTUNE_MODES:
        return 900.0, 600.0
    return 300.0, 150.0


def default_jobs(device: str, cpu_count: int | None = None) -> int:
    """How many workers a campaign gets when --jobs is not given.

    One per CPU core: on CPU each worker keeps one core busy compiling. On CUDA the
    workers share the GPU and mostly wait on the host-side compiler, so one per core
    holds too; change this one function when the jobs sweep (benchmarks/jobs_sweep.py)
    measures a better figure for a machine.
    """
    cores = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    return max(1, cores)


def default_minimizers(jobs: int) -> int:
    """Minimisations that may run at once: one per four workers, at least one."""
    return max(1, jobs // 4)


def parse_symptoms(text: str) -> tuple:
    """A comma list of symptom classes -> a tuple, with a one-line error for an unknown name."""
    names = tuple(dict.fromkeys(x.strip() for x in str(text).split(",") if x.strip()))
    if not names:
        raise ConfigError(f"--symptoms needs at least one of: {', '.join(SYMPTOMS)}")
    bad = [n for n in names if n not in SYMPTOMS]
    if bad:
        raise ConfigError(f"--symptoms: unknown symptom class {bad[0]!r}; known: {', '.join(SYMPTOMS)}")
    return names


def validate(cfg: RunConfig) -> RunConfig:
    if cfg.seconds is None and cfg.cases is None and cfg.max_findings is None:
        raise ConfigError("give a budget: --hours, --minutes, --cases or --max-findings")
    if cfg.seconds is not None and not cfg.seconds > 0:
        raise ConfigError(f"the time budget must be positive, got {cfg.seconds:g} s")
    if cfg.cases is not None and cfg.cases <= 0:
        raise ConfigError(f"--cases must be a positive number, got {cfg.cases}")
    if cfg.jobs < (0 if cfg.ray is not None else 1) or cfg.jobs > 512:  # with --ray, 0 = every slot
        raise ConfigError(f"--jobs must be between 1 and 512, got {cfg.jobs}")
    if cfg.device not in ("cpu", "cuda"):
        raise ConfigError(f"--device must be cpu or cuda, got {cfg.device!r}")
    if cfg.mode not in (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"):
        raise ConfigError(f"unknown --mode {cfg.mode!r}")
    if min(cfg.case_timeout_s, cfg.compile_timeout_s, cfg.run_timeout_s, cfg.minimize_budget_s) <= 0:
        raise ConfigError("timeouts and budgets must be positive")
    if not 0 < cfg.minimize_share < 1:
        raise ConfigError(f"minimize_share must be between 0 and 1, got {cfg.minimize_share}")
    if cfg.memory_mb and cfg.memory_mb < 1024:
        raise ConfigError(f"--memory-mb {cfg.memory_mb} is too small for a torch worker "
                          "(it needs about 800 MB; use 0 for no cap)")
    if cfg.recycle_every < 1 or cfg.max_minimize_per_bucket < 0:
        raise ConfigError("recycle_every must be >= 1 and max_minimize_per_bucket >= 0")
    if cfg.max_findings is not None and cfg.max_findings < 1:
        raise ConfigError(f"--max-findings must be at least 1, got {cfg.max_findings}")
    if cfg.symptoms is not None:
        parse_symptoms(",".join(cfg.symptoms))
    if cfg.confirm_runs < 1 or (cfg.max_minimizers is not None and cfg.max_minimizers < 1):
        raise ConfigError("confirm_runs and max_minimizers must be >= 1")
    check_generator(cfg.generator)
    if cfg.feedback not in ("off", "on"):
        raise ConfigError(f"--feedback must be off or on, got {cfg.feedback!r}")
    if cfg.novelty not in ("off", "on"):
        raise ConfigError(f"--novelty must be off or on, got {cfg.novelty!r}")
    if cfg.half_rounding not in ("fp64", "strict"):
        raise ConfigError(f"--half-rounding must be fp64 or strict, got {cfg.half_rounding!r}")
    if cfg.device == "cuda" and cfg.ray is None:  # on Ray the GPUs are on the nodes, not here
        import torch
        if not torch.cuda.is_available():
            raise ConfigError("--device cuda: this torch has no usable CUDA device "
                              f"(torch {torch.__version__})")
    out = Path(cfg.out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {cfg.out} exists and is not a folder")
    parent = out if out.exists() else out.parent
    while not parent.exists():
        parent = parent.parent
    if not os.access(parent, os.W_OK):
        raise ConfigError(f"--out {cfg.out}: {parent} is not writable")
    try:
        resolve_backend(cfg.backend)
    except BackendError as e:
        raise ConfigError(str(e)) from None
    return cfg


OP_FILTER_KEYS = ("ops", "families", "exclude")


def check_generator(knobs: dict) -> None:
    """Generator overrides must name GenConfig fields, with values of the field's type."""
    fields = {f.name: f for f in dataclasses.fields(GenConfig)}
    lists = {k: knobs.get(k, ()) for k in OP_FILTER_KEYS}
    for name, value in lists.items():
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"generator setting {name} must be a list of names, got {value!r}")
    try:
        op_filter_mask(**lists)
    except OpFilterError as e:
        raise ConfigError(str(e)) from None
    for name, value in knobs.items():
        if name in OP_FILTER_KEYS:
            continue
        if name not in fields:
            raise ConfigError(f"unknown generator setting {name!r}; known: {', '.join(sorted(fields))}")
        default = getattr(GenConfig(), name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                (isinstance(default, int) and not isinstance(value, int)):
            raise ConfigError(f"generator setting {name} must be a {type(default).__name__}, got {value!r}")
        low = 2 if name == "max_stmts" else (1 if isinstance(default, int) else 0)
        if value < low or (isinstance(default, float) and value > 1):
            raise ConfigError(f"generator setting {name} is out of range: {value!r}")
