"""Observation -> Verdicts: crash parity, outputs and input mutations.

Contract: ``judge(obs)`` returns every discrepancy between eager and compiled
in one observation, as Verdicts, and nothing when they agree. Per call:

* both raise: parity, fine;
* compiled raises, eager doesn't: compile-crash or runtime-crash (a bug);
* eager raises, compiled returns: error-parity (a lower-severity bug), except eager's
  check that a tensor saved for backward was not overwritten: which tensors a compiled
  backward saves is its own choice, so that one is a note; so is compiled failing that check
  only after the caller's own write of an input between forward and backward. Where the
  overwrite was the caller's own write after the call (``caller_reference_calls``),
  compiled's input gradients are judged by the fp64 rule against ``CallRecord.caller_ref``,
  eager with the write made so it cannot invalidate a saved tensor (symptom ``gradient``,
  oracle ``caller-write``: compiled's backward read the written values); agreement, or an
  output write with no out-of-place equivalent, stays a note;
* both return: each output is judged by the fp64 rule (symptom ``numeric``),
  each input after the call likewise (symptom ``mutation``), each input's grad
  likewise (symptom ``gradient``; None against a tensor counts), and which
  inputs each output shares storage with must be equal (symptom ``aliasing``).

An error raised in backward is part of its call: eager failing in backward
while compiled fails at compile time is parity. So is a compiled crash of the
class eager raises once its loss reaches every tensor the compiled backward
can (``CallRecord.eager_wide``: eager re-run with a loss over every
intermediate, e.g. a tensor saved for backward, overwritten, and live across a
graph break): the program is invalid, not the compiler.

Never judged (``notes(obs)`` lists them instead): a gradient eager leaves None
where compiled gives zeros; the storage relation of a zero-element tensor; a
case that writes in place into an input whose elements overlap in memory
(``stats["overlapping_writes"]``), the user error PyTorch documents, and any
error saying so. Across calls (from
``obs.stats``): a replayed call that compiles again, more compile events than
the schedule model allows, or a hit of the recompile limit is a ``recompile``
verdict whose detail carries the guard-failure reasons.

``needs_perturbation(verdicts)`` tells the executor when perturbed eager runs
(and the eager-kernel audit) could still clear a float or integer mismatch;
judging again with them is how ill-conditioned programs, and calls where an
eager kernel reads memory outside its input, are screened out: a value of a
call with ``eager_kernel_bugs`` is never a numeric, mutation or gradient verdict. Nor is a
float64 value on a device where compiled agrees with the CPU's eager and the device's eager
does not (float64 has no wider reference: there, eager's own kernel is the one that is off).
"""
from __future__ import annotations

import re

import torch

from .fp64rule import compare, off_nan_inputs
from .special import judge_special, none_vs_zeros
from .observation import Observation
from .stage import is_compile_time, stage_of_error
from .verdict import Verdict, error_signature, normalise_message


# Errors Dynamo raises by design on a request the program cannot honour, never a compiler bug:
# ``mark_dynamic`` is an assertion that the dim stays dynamic; a program that specialises it
# gets ConstraintViolationError (``maybe_mark_dynamic`` is the lenient form).
EXPECTED_REFUSALS = ("ConstraintViolationError",)


# eager and compiled refuse a write into overlapping memory with these messages
OVERLAP_ERRORS = ("refer to a single memory location", "refers to a single memory location",
                  "internal overlap", "partially overlap")


# autograd's check that a tensor saved for backward was not overwritten: which tensors are saved
# is the implementation's choice (functionalisation and the partitioner's recompute keep others),
# so eager failing it where compiled runs on is no compiler bug (maintainers close such reports)
SAVED_VERSION_ERROR = "modified by an inplace operation"


def _saved_version_error(msg: str) -> bool:
    return SAVED_VERSION_ERROR in msg and "needed for gradient computation" in msg


def _caller_made_it(obs: Observation, k: int, rec) -> bool:
    """Compiled's backward failed the saved-tensor check only because the caller wrote an input
    between forward and backward, where eager's backward saves other tensors: the mirror of the
    eager-only case above, by the same design choice. A write the program makes itself is judged."""
    c = rec.compiled
    return bool(c and c.error and rec.eager and not rec.eager.error and _saved_version_error(c.error[1])
                and k in (obs.stats.get("caller_write_calls") or ()))


def _caller_overwrote(obs: Observation, k: int, rec) -> bool:
    """Eager's backward refused a saved tensor after the caller wrote a tensor after call ``k``,
    and compiled returned: its gradients are judged against ``CallRecord.caller_ref``."""
    e, c = rec.eager, rec.compiled
    return bool(e and e.error and c and not c.error and e.error[2].startswith("backward: ")
                and _saved_version_error(e.error[1]) and k in (obs.stats.get("caller_write_calls") or ()))


def caller_reference_calls(obs: Observation) -> list[int]:
    """The calls that need the caller-write reference run (``CallRecord.caller_ref``)."""
    return [k for k, rec in enumerate(obs.calls) if _caller_overwrote(obs, k, rec) and rec.caller_ref is None]


CALLER_WRITE_DETAIL = ("the caller wrote a tensor eager saved for backward (eager's backward raises); "
                       "compiled returned, and its backward used the written values")


def _judge_caller_ref(obs: Observation, k: int, rec) -> list[Verdict]:
    """Compiled's input gradients against eager with the caller's write in its reference form
    (input write left out, output write out of place), by the fp64 rule."""
    ref = rec.caller_ref
    if not _caller_overwrote(obs, k, rec) or ref is None or ref.eager.error or rec.eager_kernel_bugs \
            or k in (obs.stats.get("special_calls") or ()):  # special values: the exact rule's screens
        return []
    e, c = ref.eager, rec.compiled
    r = ref.fp64.values if ref.fp64 is not None and ref.fp64.error is None else None
    if e.labels != c.labels:
        return []  # not the same values to compare: left as the note
    out = []
    for i, label in enumerate(e.labels):
        if not label.startswith("grad of input ") or none_vs_zeros(label, e.values[i], c.values[i]):
            continue
        pert = [p.values[i] for p in ref.perturbed if p.error is None and i < len(p.values)]
        vals = off_nan_inputs(e, label, [e.values[i], ref.eager_again.values[i],
                                         r[i] if r is not None and i < len(r) else None, c.values[i], *pert])
        status, reason = compare(*vals[:4], vals[4:], strict=bool(obs.stats.get("strict_precision")),
                                 floor_eps=float(obs.stats.get("floor_eps", 0.0)),
                                 reduce_n=int(obs.stats.get("reduce_n", 1)),
                                 coarse_eps=float(obs.stats.get("coarse_eps", 0.0)))
        if status == "mismatch":
            out.append(Verdict("gradient", "unknown", "caller-write",
                               f"{label}: {CALLER_WRITE_DETAIL} (against the no-write/out-of-place "
                               f"reference: {reason})", k, label))
    return out


def _overlap_error(error) -> bool:
    return bool(error) and any(m in error[1] for m in OVERLAP_ERRORS)


def same_error_class(a_msg: str, b_msg: str) -> bool:
    """Two messages of one error class, however wrapped: the shorter normalised one is inside
    the longer (a compiled error wraps the eager one in BackendCompilerFailed and context)."""
    key = normalise_message(a_msg.split(" | ")[0])[:60]
    b = normalise_message(b_msg)
    return bool(key) and key in b


def _wide_parity(rec) -> bool:
    """Compiled raised what eager raises with the wide loss: the program is invalid."""
    w = getattr(rec, "eager_wide", None)
    if w is None or not w.error or not rec.compiled or not rec.compiled.error:
        return False
    return same_error_class(w.error[1], rec.compiled.error[1])


def judge(obs: Observation) -> list[Verdict]:
    verdicts: list[Verdict] = []
    if obs.stats.get("overlapping_writes"):  # the documented user error: nothing to judge
        return verdicts
    for k, rec in enumerate(obs.calls):
        e, c = rec.eager, rec.compiled
        if e.error and c.error:
            continue
        if c.error and c.error[0] in EXPECTED_REFUSALS:
            continue
        if _overlap_error(e.error) or _overlap_error(c.error):
            continue
        if c.error and _wide_parity(rec):
            continue
        if c.error and _caller_made_it(obs, k, rec):
            continue  # a note (``notes``): the caller overwrote a tensor compiled chose to save
        if c.error:
            t, msg, where = c.error
            symptom = "compile-crash" if is_compile_time(t, msg) else "runtime-crash"
            verdicts.append(Verdict(symptom, stage_of_error(t, msg, obs.backend), "crash-parity",
                                    f"compiled raised {t}: {msg[:300]}", k, "",
                                    error_signature(t, msg)))
            continue
        if e.error:
            t, msg, _ = e.error
            if _saved_version_error(msg):
                # a note (``notes``): compiled code keeps other tensors for backward; but after
                # the caller's write its gradients must still be the unwritten forward's
                verdicts += _judge_caller_ref(obs, k, rec)
                continue
            verdicts.append(Verdict("error-parity", "unknown", "crash-parity",
                                    f"eager raised {t}: {msg[:200]}; compiled returned normally", k,
                                    "", error_signature(t, msg)))
            continue
        floor_eps = float(obs.stats.get("floor_eps", 0.0))
        reduce_n = int(obs.stats.get("reduce_n", 1))
        coarse_eps = float(obs.stats.get("coarse_eps", 0.0))
        # an output whose value never passed through the program's coarsest type: its own floor
        by_label = obs.stats.get("floor_eps_by_label") or {}
        found = _judge_values(obs.backend, k, rec, bool(obs.stats.get("strict_precision")), floor_eps,
                              reduce_n, coarse_eps, by_label=by_label)
        # the CPU is no witness where the program's semantics depend on the device: the caller's
        # autocast (CPU and CUDA autocast cast different op lists) and special values (GPU
        # kernels flush subnormals, overflow differently); those calls are judged on the device
        device_bound = k in (obs.stats.get("special_calls") or ()) or \
            k in (obs.stats.get("caller_autocast_calls") or ())
        if not found and not device_bound:
            found = judge_cross_device(k, rec, floor_eps, reduce_n, coarse_eps, by_label=by_label)
        verdicts += found
    if all(rec.compiled is not None and rec.compiled.error is None for rec in obs.calls):
        verdicts += judge_recompiles(obs.stats)
    return judge_special(obs, verdicts)  # calls with special values: the exact rule


def _same_kind(a, b) -> bool:
    """Same dtype and shape (tensors), or both not tensors."""
    import torch
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape
    return isinstance(a, torch.Tensor) == isinstance(b, torch.Tensor)


def notes(obs: Observation) -> list[str]:
    """Differences seen and deliberately not judged, for the event log and the report."""
    out = []
    if obs.stats.get("overlapping_writes"):
        out.append("writes in place into overlapping input memory (the user error PyTorch "
                   f"documents): {', '.join(obs.stats['overlapping_writes'])}; not judged")
    for k, rec in enumerate(obs.calls):
        e, c = rec.eager, rec.compiled
        if _wide_parity(rec) and e is not None and not e.error:
            out.append(f"call {k}: compiled raised the error eager raises with a loss over every "
                       "intermediate: the program is invalid (parity)")
        if _caller_made_it(obs, k, rec):
            out.append(f"call {k}: compiled's check of a tensor saved for backward failed after the caller "
                       f"wrote an input ({c.error[1][:120]}); eager's backward saves other tensors: not judged")
        if e is not None and e.error and c is not None and not c.error and _saved_version_error(e.error[1]):
            judged = _caller_ref_note(obs, k, rec)
            if judged is None:
                continue  # filed: compiled's gradients differ from the reference
            out.append(f"call {k}: eager's check of a tensor saved for backward failed ({e.error[1][:120]}); "
                       + (judged or "compiled code saves other tensors for backward by design: not judged"))
        if e is None or c is None or e.error or c.error or len(e.values) != len(c.values):
            continue
        for label, ev, cv in zip(e.labels, e.values, c.values):
            if none_vs_zeros(label, ev, cv):
                out.append(f"call {k}: {label}: eager gave None, compiled zeros (accepted)")
            elif label.startswith("alias ") and "empty" in (ev, cv):
                out.append(f"call {k}: {label}: zero-element tensor, storage not judged")
    return out + recompile_notes(obs.stats)


def _caller_ref_note(obs: Observation, k: int, rec) -> str | None:
    """What became of compiled's gradients after the caller's write (``_judge_caller_ref``): a
    note's ending, "" where there was nothing to judge, None where a verdict was filed."""
    ref = rec.caller_ref
    if not _caller_overwrote(obs, k, rec) or ref is None:
        return ""
    if ref.eager.error:
        return f"the caller's write has no reference ({ref.eager.error[1][:100]}): not judged"
    if ref.eager.labels != rec.compiled.labels or rec.eager_kernel_bugs or \
            k in (obs.stats.get("special_calls") or ()):
        return "the caller wrote it after the call; its reference is no witness here: not judged"
    if _judge_caller_ref(obs, k, rec):
        return None
    return ("the caller wrote it after the call; compiled's gradients agree with eager's without "
            "the write (an output's write out of place)")


def _reasons(stats: dict) -> str:
    guards = stats.get("guard_failures") or []
    text = "; guard failures: " + " | ".join(guards[:4]) if guards else ""
    breaks = stats.get("graph_breaks") or []
    return text + ("; graph breaks: " + " | ".join(breaks[:3]) if breaks else "")


def guard_kind(reason: str) -> str:
    """A guard-failure reason with the program's names and numbers masked: what failed."""
    text = re.sub(r"^\s*-?\s*\d+/\d+:\s*", "", reason)          # "0/1: " cache-entry prefix
    text = re.sub(r"'[^']*'", "'V'", text)                     # tensor 'x' / L['x']
    text = re.sub(r"\bL\[[^\]]*\]", "L[V]", text)
    return normalise_message(text)[:80]


def _only(reasons, words) -> bool:
    return bool(reasons) and all(any(w in r for w in words) for r in reasons)


def classify_replay(reasons: list[str], dynamic) -> str:
    """Why a replayed call compiled again, from its guard failures: "stride" (only strides
    changed: a performance note), "automatic-dynamic" (only sizes changed under
    ``dynamic=None``: Dynamo recompiling a size that changed into a dynamic graph, expected),
    else "bug"."""
    if _only(reasons, ("stride mismatch",)):
        return "stride"
    if dynamic is None and _only(reasons, ("size mismatch", "stride mismatch", "dimensionality")):
        return "automatic-dynamic"
    return "bug"


def settles(stats: dict) -> bool:
    """The replay compiled again, and a second replay compiled nothing: a one-off, not a call
    that recompiles every time (CPU 1509: a graph break inside a module's forward made Dynamo
    break the caller at the call site, and the newer cache entry, more general, sent the replayed
    first call into a frame it had not run at that size: one compile, then none, output right)."""
    second = stats.get("replay2_graphs_per_call")
    return second is not None and not any(second)


def judge_recompiles(stats: dict) -> list[Verdict]:
    out = []
    replay = [] if settles(stats) else stats.get("replay_graphs_per_call") or []
    per_call = stats.get("replay_reasons") or [[] for _ in replay]
    dynamic = stats.get("dynamic")
    again, seen = [], []
    for k, g in enumerate(replay):
        reasons = per_call[k] if k < len(per_call) else []
        if g > 0 and classify_replay(reasons, dynamic) == "bug":
            again.append(k)
            seen += reasons
    if again:
        first = guard_kind(seen[0]) if seen else "no guard failure recorded"
        out.append(Verdict("recompile", "capture", "recompile",
                           f"replaying the schedule compiled again at calls {again}"
                           + _reasons({**stats, "guard_failures": seen or stats.get("guard_failures")}),
                           again[0], "", f"recompile: replay compiled again: {first}"))
    events, bound = stats.get("compile_events"), stats.get("max_compile_events")
    if events is not None and bound is not None and events > bound:
        out.append(Verdict("recompile", "capture", "recompile",
                           f"{events} calls compiled, the schedule allows at most {bound}"
                           + _reasons(stats), -1, "", "recompile: more compiles than predicted"))
    if stats.get("recompile_limit_hit"):
        name = stats.get("recompile_limit_name", "recompile_limit")
        out.append(Verdict("recompile", "capture", "recompile",
                           f"hit torch._dynamo.config.{name}" + _reasons(stats), -1, "",
                           "recompile: limit hit"))
    return out


def recompile_notes(stats: dict) -> list[str]:
    """Replay compiles that are not bugs: stride-only recompiles (performance) and automatic
    dynamic shapes."""
    out = []
    per_call = stats.get("replay_reasons") or []
    for k, g in enumerate(stats.get("replay_graphs_per_call") or []):
        reasons = per_call[k] if k < len(per_call) else []
        kind = classify_replay(reasons, stats.get("dynamic")) if g > 0 else None
        if kind == "stride":
            out.append(f"replayed call {k} recompiled for strides only: {guard_kind(reasons[0])}")
        elif kind == "automatic-dynamic":
            out.append(f"replayed call {k} recompiled into a dynamic graph (automatic dynamic "
                       f"shapes): {guard_kind(reasons[0])}")
        elif kind == "bug" and settles(stats):
            out.append(f"replayed call {k} compiled once more, and a second replay compiled nothing "
                       f"(a one-off: {guard_kind(reasons[0]) if reasons else 'no guard failure recorded'})")
    return out


def _symptom(label: str) -> str:
    if label.startswith(("input ", "state ")):  # state: torch globals and rebound globals
        return "mutation"
    if label.startswith("grad "):
        return "gradient"
    if label.startswith("alias "):
        return "aliasing"
    return "numeric"


def _judge_values(backend: str, k: int, rec, strict: bool = False, floor_eps: float = 0.0,
                  reduce_n: int = 1, coarse_eps: float = 0.0, by_label=None) -> list[Verdict]:
    """``by_label``: {label: floor_eps} for the values judged by a floor of their own."""
    by_label = by_label or {}
    e, c = rec.eager, rec.compiled
    if len(e.values) != len(c.values):
        return [Verdict("numeric", "unknown", "numeric",
                        f"eager gave {len(e.values)} values, compiled {len(c.values)}", k)]
    out = []
    ref = rec.fp64.values if rec.fp64 is not None and rec.fp64.error is None else None
    for i, label in enumerate(e.labels):
        r = ref[i] if ref is not None and i < len(ref) else None
        # a value judged by a floor of its own is screened by runs moved by its own epsilons
        runs = rec.perturbed_fine if label in by_label and getattr(rec, "perturbed_fine", None) else rec.perturbed
        pert = [p.values[i] for p in runs if p.error is None and i < len(p.values)]
        if c.labels[i] != label:
            out.append(Verdict(_symptom(label), "unknown", "structure",
                               f"eager value {i} is {label!r}, compiled {c.labels[i]!r}", k, label))
            break
        if none_vs_zeros(label, e.values[i], c.values[i]) or \
                (label.startswith("alias ") and "empty" in (e.values[i], c.values[i])):
            continue
        vals = off_nan_inputs(e, label, [e.values[i], rec.eager_again.values[i], r, c.values[i], *pert])
        floor = float(by_label.get(label, floor_eps))
        status, reason = compare(*vals[:4], vals[4:], strict=strict, floor_eps=floor, reduce_n=reduce_n,
                                 coarse_eps=coarse_eps)
        if status == "mismatch" and rec.eager_kernel_bugs and not label.startswith("alias "):
            continue  # eager's own kernel misbehaved in this call: no witness for the compiler
        if status == "mismatch" and _device_eager_is_the_outlier(rec, i, floor, reduce_n):
            continue  # float64: the CPU's eager agrees with compiled, the device's eager does not
        if status == "mismatch":
            oracle = "aliasing" if label.startswith("alias ") else "fp64-rule"
            out.append(Verdict(_symptom(label), "unknown", oracle, f"{label}: {reason}", k, label,
                               _meta_signature(label, e.values[i], c.values[i])))
    return out


def _meta_signature(label: str, eager, compiled) -> str:
    """An output-metadata mismatch's bucket identity: eager's description whole, then only the
    fields compiled changed (``alias meta of output tensor N: eager='requires_grad=True leaf=False
    inference=False view=True' compiled: view=False``). Cut at 80 characters, the detail hid the
    compiled side: a lost requires_grad and a lost view shared one bucket (CPU 1512 48c25e93)."""
    if not label.startswith("alias meta") or not isinstance(eager, str) or not isinstance(compiled, str):
        return ""
    before = dict(p.split("=", 1) for p in eager.split() if "=" in p)
    changed = [p for p in compiled.split() if "=" in p and before.get(p.split("=", 1)[0]) != p.split("=", 1)[1]]
    return re.sub(r"\d+", "N", label) + f": eager='{eager}' compiled: " + (" ".join(changed) or "same fields")


def _device_eager_is_the_outlier(rec, i: int, floor_eps: float, reduce_n: int) -> bool:
    """A float64 value has no wider reference: its "fp64 run" is eager itself, so an eager kernel
    that is only float32-accurate (CUDA hardswish of a 0-dim float64 tensor was off by 3e-8,
    compiled exact) makes compiled look wrong. Where the CPU's eager ran the same call, it is a
    second implementation: compiled within the rule of it while the device's eager is not means
    eager is the one that is off."""
    cpu, e, c = rec.cpu_eager, rec.eager, rec.compiled
    if cpu is None or cpu.error or cpu.labels != e.labels or i >= len(cpu.values):
        return False
    w, ev, cv = cpu.values[i], e.values[i], c.values[i]
    if not all(getattr(t, "dtype", None) == torch.float64 for t in (w, ev, cv)) or w.shape != ev.shape:
        return False

    def near(x) -> bool:
        return compare(w, w, w, x, floor_eps=floor_eps, reduce_n=reduce_n)[0] == "ok"
    return near(cv) and not near(ev)


def judge_cross_device(k: int, rec, floor_eps: float = 0.0, reduce_n: int = 1,
                       coarse_eps: float = 0.0, by_label=None) -> list[Verdict]:
    """Compiled on the device against eager on the CPU: a mismatch only when compiled is further
    from fp64 than both eager runs (and the perturbed runs) are, so kernels that legitimately
    differ between devices are never blamed on the compiler."""
    e, c, cpu = rec.eager, rec.compiled, rec.cpu_eager
    if cpu is None or cpu.error or e.error or c is None or c.error or cpu.labels != c.labels \
            or rec.eager_kernel_bugs:
        return []
    ref = rec.fp64.values if rec.fp64 is not None and rec.fp64.error is None else None
    out = []
    for i, label in enumerate(cpu.labels):
        if label.startswith(("alias ", "state ")) or none_vs_zeros(label, cpu.values[i], c.values[i]) \
                or (cpu.values[i] is None) != (e.values[i] is None) or not _same_kind(cpu.values[i], e.values[i]):
            continue  # the two eagers disagree on what the value is: a device difference, not the compiler's
        r = ref[i] if ref is not None and i < len(ref) else None
        witnesses = [e.values[i]] + [p.values[i] for p in rec.perturbed if p.error is None
                                     and i < len(p.values)]
        status, reason = compare(cpu.values[i], cpu.values[i], r, c.values[i], witnesses,
                                 floor_eps=float((by_label or {}).get(label, floor_eps)), reduce_n=reduce_n,
                                 coarse_eps=coarse_eps)
        if status == "mismatch":
            out.append(Verdict(_symptom(label), "unknown", "cross-device",
                               f"{label} (vs CPU eager): {reason}", k, label))
    return out


def needs_perturbation(verdicts: list[Verdict]) -> bool:
    return any(v.oracle in ("fp64-rule", "cross-device") for v in verdicts)
