"""Exact comparison for calls whose values hold special floats (NaN, +-inf, -0.0, extremes).

Contract: ``judge_special(obs, verdicts)`` returns ``verdicts`` adjusted for the calls listed
in ``obs.stats["special_calls"]``: it adds ``exact-special`` verdicts and drops fp64-rule
verdicts that special values make unjudgeable. It never touches other calls.

The rule, per float value (outputs, inputs and state after the call), on elements where eager
is deterministic (eager and eager-again agree bitwise):

* Non-finite classes. Where eager and the fp64 run agree on the class (NaN, +inf or -inf),
  compiled must have that class. NaN payloads and NaN sign bits are never compared (IEEE
  leaves them open and PyTorch does not specify them). Where eager and fp64 disagree (eager
  overflowed, fp64 did not) nothing is judged: compiled may legitimately keep more range.
  Without an fp64 run nothing non-finite is judged. Where the fp64 run is itself half
  precision (the program builds or casts to fp16/bf16, so the run cannot upcast it), it is no
  witness of range either: eager +-inf against compiled finite there is Inductor's fp32
  intermediates (upstream's documented default), not judged. Compiled NaN or inf where eager is
  finite, and a NaN lost, still are.
* Sign of zero. Only where eager, eager-again and the fp64 run are all exactly zero with the
  same sign bit, and only for the values ``obs.stats["special_sign_labels"]`` lists: outputs
  built only by ops that define the sign of a zero result (IEEE max/min, clamps, selections and sorts of +-0 ties,
  reductions and fused arithmetic may give either zero, and PyTorch maintainers do not accept
  those as bugs; a flipped zero from arithmetic that defines it, such as ``neg``, ``mul``,
  ``div`` or ``copysign``, changes ``1/x``, ``atan2`` and ``copysign`` downstream and is).
  Nor for a value that an eager kernel giving either zero itself reaches (``eager_sign_open``,
  ``eager_sign_reached``, the zero-sign audit: softshrink's vector lanes give +0.0 where its
  scalar loop gives -0.0).

Dropped: integer/bool mismatches when ``obs.stats["special_casts"]`` (a float is cast to an
integer: the result for NaN/inf is undefined behaviour in C and differs between kernels), and
"compiled is non-finite where eager is finite" when the program sums (``reduce_n > 1``):
values near the largest finite magnitude overflow or not depending on summation order. That
drop spares the values no special value can reach (``obs.stats["special_clean"]``, a taint
analysis of the program) the fp64 rule still judges those. Nor does it drop a non-finite value compiled made in an output
no sum flows into (``obs.stats["special_sum_free"]``: every op back to the inputs is elementwise,
a view or a cast, so no summation order explains it).
"""
from __future__ import annotations

import torch

from .verdict import Verdict

_CLASSES = ("finite", "NaN", "+inf", "-inf")
_HALF = (torch.float16, torch.bfloat16)


def classes(t: torch.Tensor) -> torch.Tensor:
    """0 finite, 1 NaN, 2 +inf, 3 -inf, per element."""
    t = t.detach().cpu()
    out = torch.zeros(t.shape, dtype=torch.int8)
    out[t.isnan()] = 1
    out[t == float("inf")] = 2
    out[t == float("-inf")] = 3
    return out


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Elementwise: equal values with equal sign bits, NaN equal to NaN."""
    return ((a == b) & (a.signbit() == b.signbit())) | (a.isnan() & b.isnan())


def compare_special(eager, eager_again, ref64, compiled, sign: bool) -> tuple[str, str]:
    """``("ok"|"mismatch"|"skip", reason)`` for one float value under the exact rule."""
    if not all(isinstance(t, torch.Tensor) for t in (eager, eager_again, compiled)):
        return "skip", "not tensors"
    if not eager.dtype.is_floating_point or compiled.shape != eager.shape or compiled.dtype != eager.dtype \
            or eager_again.shape != eager.shape:
        return "skip", "not a float value of matching type"
    if not isinstance(ref64, torch.Tensor) or ref64.shape != eager.shape:
        return "skip", "no fp64 run"
    e, e2, c, r = (t.detach().cpu() for t in (eager, eager_again, compiled, ref64))
    det = _same_bits(e, e2)
    ce, cr, cc = classes(e), classes(r), classes(c)
    judged = det & (ce != 0) & (ce == cr)
    if r.dtype in _HALF and e.dtype in _HALF:
        # the "fp64" run stayed half (the program builds or casts to a half type itself), so it
        # is no witness of range: an eager overflow that compiled does not have is Inductor's
        # fp32 intermediates (by design unless emulate_precision_casts), never judged
        judged &= ~(((ce == 2) | (ce == 3)) & (cc == 0))
    bad = judged & (cc != ce)
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        return "mismatch", (f"{int(bad.sum())} elements where eager and fp64 are "
                            f"{_CLASSES[int(ce[idx])]} differ in class compiled; first at {list(idx)}: "
                            f"eager={e[idx].item()!r} compiled={c[idx].item()!r}")
    if sign:
        zero = det & (e == 0) & (r == 0) & (e.signbit() == r.signbit().to(torch.bool))
        flipped = zero & (c == 0) & (c.signbit() != e.signbit())
        if flipped.any():
            idx = tuple(int(i) for i in flipped.nonzero()[0])
            return "mismatch", (f"{int(flipped.sum())} zeros change sign compiled; first at {list(idx)}: "
                                f"eager={e[idx].item()!r} compiled={c[idx].item()!r}")
    return "ok", ""


def _symptom(label: str) -> str:
    return "mutation" if label.startswith(("input ", "buffer ", "global ", "state ")) else "numeric"


def judge_special(obs, verdicts: list[Verdict]) -> list[Verdict]:
    calls = set(obs.stats.get("special_calls") or ())
    if not calls:
        return verdicts
    sign_labels = set(obs.stats.get("special_sign_labels") or ())
    casts = bool(obs.stats.get("special_casts"))
    sums = int(obs.stats.get("reduce_n", 1)) > 1
    clean = obs.stats.get("special_clean") or {}
    sum_free = set(obs.stats.get("special_sum_free") or ())
    kept = []
    for v in verdicts:
        if v.call in calls and _none_vs_zero_times_special(obs, v):
            continue
        if v.call in calls and v.oracle == "fp64-rule":
            val = _value(obs, v.call, v.label)
            if casts and isinstance(val, torch.Tensor) and not val.dtype.is_floating_point:
                continue
            made_non_finite = "compiled is non-finite" in v.detail
            if made_non_finite and v.label in sum_free:
                pass  # no sum flows into it: compiled made a NaN or inf that no order explains
            elif sums and not _clean(v.label, clean) and (
                    isinstance(val, torch.Tensor) and val.dtype.is_floating_point
                    or "compiled is non-finite" in v.detail):
                # a sum over +-max, inf and NaN depends on its order (overflow, cancellation),
                # and the fp64 run, which does not overflow, is no witness for it: only the
                # exact class rule below judges these values
                continue
        kept.append(v)
    flagged = {(v.call, v.label) for v in kept}
    for k in sorted(calls):
        rec = obs.calls[k] if k < len(obs.calls) else None
        if rec is None or rec.compiled is None or rec.eager.error or rec.compiled.error \
                or rec.eager.labels != rec.compiled.labels or rec.eager_kernel_bugs:
            continue
        ref = rec.fp64.values if rec.fp64 is not None and rec.fp64.error is None else None
        for i, label in enumerate(rec.eager.labels):
            if (k, label) in flagged or label.startswith(("alias ", "grad ")):
                continue
            r = ref[i] if ref is not None and i < len(ref) else None
            # a kernel of this call that gives either sign of zero (its vector lanes against its
            # scalar loop: eager's own choice) leaves the sign of the zeros it reaches unjudged
            status, reason = compare_special(rec.eager.values[i], rec.eager_again.values[i], r,
                                             rec.compiled.values[i], label in sign_labels and not _sign_open(rec, label))
            if status == "mismatch":
                kept.append(Verdict(_symptom(label), "unknown", "exact-special", f"{label}: {reason}", k, label))
    return kept


def _sign_open(rec, label: str) -> bool:
    """Eager's own kernel may give this value either sign of zero (``ZeroSignAudit``)."""
    if not rec.eager_sign_open:
        return False
    reached = getattr(rec, "eager_sign_reached", None)
    return reached is None or label in reached


def _clean(label: str, clean: dict) -> bool:
    """Whether no special value can reach this value (``stats["special_clean"]``)."""
    if label.startswith("grad "):
        return bool(clean.get("grads"))
    if label.startswith(("input ", "buffer ", "state ")):
        return bool(clean.get("inputs"))
    return label in (clean.get("outputs") or ())


def none_vs_zeros(label: str, eager, compiled, special: bool = False) -> bool:
    """Eager's None gradient against compiled zeros: a known, accepted difference. With
    ``special`` (a call on salted special values), a compiled gradient with no finite non-zero
    element counts too: its zeros met an inf or NaN of the input (0 * inf is NaN). A compiled
    gradient with any real value stays a verdict."""
    if not (label.startswith("grad ") and eager is None and isinstance(compiled, torch.Tensor)):
        return False
    c = compiled.detach().cpu()
    if special:
        return c.dtype.is_floating_point and not bool((c.isfinite() & c.ne(0)).any())
    return not bool(c.ne(0).any())


def _none_vs_zero_times_special(obs, v: Verdict) -> bool:
    return none_vs_zeros(v.label, _value(obs, v.call, v.label), _value(obs, v.call, v.label, "compiled"),
                         special=True)


def _value(obs, k: int, label: str, side: str = "eager"):
    rec = obs.calls[k]
    out = getattr(rec, side, None)
    try:
        return out.values[out.labels.index(label)]
    except (ValueError, IndexError, AttributeError):
        return None
