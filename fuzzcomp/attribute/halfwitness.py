"""The half-precision witness: is a value finding only Inductor's fp32 intermediates?

Contract: ``half_witness(case, obs, verdicts, options, check)`` returns the verdicts to keep;
``check`` is the probe it re-runs the case with (handed in by ``fuzzcomp.judge.check``).

Inductor computes fp16/bf16 expressions in float32 inside a kernel and rounds only what it
stores; eager rounds after every op. That is Inductor's documented default, and
``torch._inductor.config.emulate_precision_casts = True`` is the switch that makes it round
like eager. The fp64 rule normally tells the two apart (compiled closer to an fp64 run is not a
bug), but a program that builds or casts to a half type itself (``torch.tensor(..., dtype=
torch.float16)``, ``.half()``, autocast) stays half in the fp64 run too, so there the fp64 run is
no witness: an fp16 product that underflows to 0 in eager and not in compiled turns
``1/atan2(x, x)`` into ``inf`` against ``1.27`` in both eager and "fp64". PyTorch maintainers
close such reports as "set emulate_precision_casts".

So, for a compile that can take that setting (any backend past AOTAutograd) and a program with
a half-precision type (``stats["floor_eps"]`` or ``stats["coarse_eps"]`` at fp16's epsilon or
coarser), each value finding (numeric, gradient, mutation) is re-checked once with
``emulate_precision_casts=True`` (``strict_precision``: half values then judged against eager
within one rounding step). A value finding that the strict run does not show again is dropped
and becomes a note, unless compiled made a finite value NaN or inf (``made_non_finite``); one
the strict run shows is kept unchanged. A strict run that cannot run keeps all.
``obs.stats["half_witness"]`` records what was decided. Nothing else is touched.
"""
from __future__ import annotations

from dataclasses import replace

from fuzzcomp.base.symptoms import VALUE

HALF_EPS = 2.0 ** -10
_NOT_INDUCTOR = ("eager", "aot_eager", "aot_eager_decomp_partition")


def applies(case, obs, verdicts, options) -> bool:
    """Whether the witness run is needed (and can say anything) for these verdicts."""
    if getattr(options, "strict_precision", False) or case.compile.backend in _NOT_INDUCTOR:
        return False
    if not any(v.symptom in VALUE for v in verdicts):
        return False
    try:
        import torch._inductor.config as inductor_config
    except ImportError:
        return False
    if not hasattr(inductor_config, "emulate_precision_casts"):
        return False
    coarsest = max(float(obs.stats.get("floor_eps", 0.0)), float(obs.stats.get("coarse_eps", 0.0)))
    return coarsest >= HALF_EPS


def made_non_finite(verdict) -> bool:
    """Compiled turned a value NaN or inf where eager and fp64 are finite: more precise float32
    intermediates explain a value closer to fp64, never a NaN (an fp16 amax backward whose mask
    compares a float32 recomputation with the saved fp16 max divides 0 by 0: #186799), so the
    witness never clears it."""
    return "compiled is non-finite" in verdict.detail


def half_witness(case, obs, verdicts: list, options, check) -> list:
    """``check(case, options) -> (observation, verdicts)`` is the probe the witness runs with."""
    if not applies(case, obs, verdicts, options):
        return verdicts
    sub = replace(options, strict_precision=True, ladder=False, culprit=False)
    try:
        _, strict = check(case, sub)
    except Exception as e:  # a witness our harness cannot run clears nothing
        obs.stats["half_witness"] = {"ran": False, "error": f"{type(e).__name__}: {e}"[:200]}
        return verdicts
    shown = {(v.call, v.label, v.symptom) for v in strict}
    kept, dropped = [], []
    for v in verdicts:
        clears = v.symptom in VALUE and (v.call, v.label, v.symptom) not in shown and not made_non_finite(v)
        (dropped if clears else kept).append(v)
    obs.stats["half_witness"] = {"ran": True, "dropped": [f"{v.symptom}: {v.detail}"[:160] for v in dropped]}
    if dropped:
        labels = ", ".join(sorted({f"call {v.call}: {v.label}" for v in dropped}))
        notes = list(obs.stats.get("notes") or [])
        notes.append(f"{labels}: differs only while Inductor keeps fp32 intermediates of half-precision "
                     "values; with emulate_precision_casts=True it matches eager (by design, not judged)")
        obs.stats["notes"] = notes[:20]
    return kept
