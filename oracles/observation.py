"""What one execution of a case saw, as the oracles consume it.

Contract: an ``Observation`` holds, per call of the schedule, the outcome of
eager, of eager again (nondeterminism screen), of the fp64 reference run (None
when the program cannot run in fp64), of the compiled run, and of any
perturbed eager runs; ``eager_kernel_bugs`` lists the aten kernels the eager
audit (``fuzzcomp.kernel_audit``) caught reading outside their input in that
call, which makes its values unjudgeable; ``caller_ref`` (where the caller's write after the
call made eager's backward refuse a tensor it saved) holds eager, eager again, fp64 and perturbed
runs with the write in its reference form (``run_call``'s ``caller_ref``). An outcome is
any object with ``values`` (tensors or scalars: outputs, then the inputs after the call), ``labels`` (one per value)
and ``error`` (None or ``(type name, message, frames)``). Labels name what a
value is: ``output...``, ``input NAME after call``, ``alias of output tensor
N`` (a string: the inputs it shares storage with, or "fresh") and ``grad of
input NAME`` (a tensor, or None where autograd gave none). An error raised in
backward is the call's error, its frames starting with ``"backward: "``.

``stats`` carries, from the executor: ``graphs_per_call`` and
``replay_graphs_per_call`` (new graphs per call in the first pass and in the
replay), ``compile_events`` and ``max_compile_events`` (calls that compiled,
and the schedule model's bound, None when it does not apply),
``guard_failures``, ``graph_breaks`` (reason lines), ``recompile_limit_hit``
and ``recompile_limit_name``, ``grad`` ("on", "none" or
"rejected-in-backward"), ``grad_inputs``, ``backward_error`` and
``strict_precision``; ``replay_reasons`` (guard failures per replayed call),
``dynamic`` (the compile's setting), ``floor_eps``, ``reduce_n`` and ``coarse_eps`` (the fp64
rule's floors) and ``floor_eps_by_label`` (the outputs whose value never passed through the
program's coarsest type, with their own floor), ``overlapping_writes`` (inputs whose
elements overlap in memory and that the program writes in place); after
``fuzzcomp.execute.check``: ``notes`` (differences deliberately not judged),
``ladder`` (the stage and what each rung showed) and ``culprit`` (how the
primary value finding's culprit op was found).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class CallRecord:
    eager: Any
    eager_again: Any
    fp64: Any
    compiled: Any
    perturbed: list = field(default_factory=list)
    cpu_eager: Any = None   # device runs only: the same call in eager on the CPU (cross-device oracle)
    eager_kernel_bugs: list = field(default_factory=list)  # kernels the eager audit caught
    eager_sign_open: list = field(default_factory=list)  # kernels giving either zero (ZeroSignAudit)
    eager_sign_reached: list | None = None  # the values those kernels reach (None: every value)
    eager_wide: Any = None  # after a compiled crash: eager with a loss over every intermediate
    # where the caller's write made eager's backward refuse a saved tensor: a CallRecord of eager
    # with the write in its reference form (left out for an input, out of place for an output)
    caller_ref: Any = None
    # perturbed runs at the values' own epsilons where ``perturbed`` moved inputs by bfloat16
    # steps (an autocast region): the screen of the outputs judged by a floor of their own
    perturbed_fine: list = field(default_factory=list)


@dataclass
class Observation:
    backend: str
    calls: list[CallRecord]
    stats: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)

    @property
    def eager_valid(self) -> bool:
        """The program ran in eager on every call (invalid cases waste compile time), or eager
        failed only on the caller's own write after a call (``stats["caller_induced"]``): crash
        parity judges those calls."""
        return all(c.eager.error is None for c in self.calls) or bool(self.stats.get("caller_induced"))
