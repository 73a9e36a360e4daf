"""Typed messages between the campaign and its worker processes.

Contract: the parent sends ``Job``s and receives ``JobResult``s over a pipe;
both pickle with nothing but the standard library, the IR and the oracles'
``Verdict``. No tensors cross the pipe, and no stdout is ever scraped. While a job runs,
a local worker also sends ``("phase", name)`` markers (``execute.PHASES``) so
the parent can hold each compilation and each run to its own timeout.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from fuzzcomp.generators import Case
from fuzzcomp.oracles import Verdict

CHECK = "check"            # execute eager/fp64/compiled, then judge
EAGER_ONLY = "eager-only"  # execute eager alone: tells a compiler crash from a program crash
LOCALISE = "localise"      # re-run on the backend ladder; JobResult.stats = judge.check.localise(...)

DONE, DIED, TIMEOUT, HARNESS_ERROR = "done", "died", "timeout", "harness-error"
CANCELLED = "cancelled"    # the parent gave up on the job (campaign stopping); never a finding


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    case: Case
    timeout_s: float
    target: Verdict | None = None  # LOCALISE: the finding whose stage is wanted
    compile_timeout_s: float | None = None  # the most one compilation (Dynamo + backend) may take
    run_timeout_s: float | None = None      # the most one eager or compiled run of a call may take
    fix: str | None = None                  # CHECK under this fix probe (fuzzcomp.run.fix_probes)


@dataclass
class JobResult:
    job_id: int
    status: str
    valid: bool = False
    verdicts: list[Verdict] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    message: str = ""
    exitcode: int | None = None
