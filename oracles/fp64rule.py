"""PyTorch's fuzzer rule for one value: compiled against an fp64 reference.

Contract: ``compare(eager, eager_again, ref64, compiled, perturbed)`` judges one
output (or one input after a call) and returns ``(status, reason)`` with status
``"ok"``, ``"skip"`` (eager itself is not a trustworthy witness here) or
``"mismatch"``. It imports only torch and math: repro files embed this source
verbatim, so a repro judges exactly as the campaign did.

The rule, for float values: on the elements where the fp64 run, eager and
compiled are all finite, compiled passes when
``rmse(fp64, compiled) <= m * rmse(fp64, eager) + floor`` with ``m`` = 2 (3 for
fp16/bf16 or fewer than 1000 elements, as in ``torch._dynamo.utils.same``) and
``floor`` = 4 machine epsilons of the dtype (for float16/bfloat16 values: ``HALF_ROUNDINGS``
roundings of their own type) times the reference's RMS where that RMS is at
least 1; below 1, 4 epsilons times the RMS but never under ``same``'s own absolute allowance
(``SAME_FLOOR``, tol / 10) nor over 4 epsilons (so no looser than ``same`` on small half values,
and float32/float64 as before); ``floor_eps`` raises that epsilon to the coarsest float type the program casts to
(an explicit ``.to(torch.bfloat16)`` or autocast region is half precision in the fp64 run
too, so the reference is no finer than that type there). ``reduce_n`` (the most terms one sum
in the program can add: reductions, matmuls, losses, scatter-adds, backward) raises it to
``sqrt(reduce_n)`` rounding steps of the accumulation type (float32 for fp16/bf16/fp32,
float64 for fp64): summing in another order legitimately moves a result that far, and eager's
cascade summation is more accurate than a plain vectorised sum without being "right". Without
an fp64 reference (the fp64 run failed), eager is the only witness and its roundings are not the
truth: ``coarse_eps`` (the coarsest float type among the program's tensors) then raises the floor,
since compiled code may legitimately skip an intermediate rounding to that type. Compiled turning a finite answer into NaN/Inf is a mismatch; compiled being
finite where eager overflowed is not. Integer and bool values must match
exactly unless the fp64 run or a perturbed eager run changes the same elements
(a tie or a rounding boundary). A float mismatch is dropped when a perturbed
eager run (inputs moved by a few epsilons) lands as far from fp64 as compiled
does: the computation is ill-conditioned, not miscompiled. Eager disagreeing
with itself makes the value unjudgeable. ``None`` (an input autograd gave no
grad) matches only ``None``.

``off_nan_inputs`` leaves a gradient's elements at NaN input elements out of every run's values.

``strict=True`` (strict half-precision parity, meant for compiles with
``emulate_precision_casts=True``): fp16/bf16 values are judged against eager
itself: every finite element within one rounding step of eager's
(``|c - e| <= eps * |e|``), instead of against fp64.
"""
import math

import torch

#: torch._dynamo.utils.same's default absolute allowance beside its multiplier (tol=1e-4, tol / 10)
SAME_FLOOR = 1e-5
#: roundings of a float16/bfloat16 value's own type in the floor: compiled code may round a half
#: result once where eager's is exact (Inductor computes half math in float32 and rounds at the
#: end). Measured on 1196 real-Inductor seeds (benchmarks/oracle_fp_rate.py): same()'s default,
#: which allows none, flagged no native half value beyond this rule; 4 let 1% errors pass at 1.
HALF_ROUNDINGS = 1
_EPS = {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7, torch.float32: 2.0 ** -23,
        torch.float64: 2.0 ** -52}


def bitwise_same(a, b):
    """Same shape, dtype and bits (NaN equal to NaN)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.is_floating_point or a.dtype.is_complex:
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return bool(torch.equal(a, b))


def _rmse(a, b):
    if a.numel() == 0:
        return 0.0
    return math.sqrt(float(torch.mean((a - b) ** 2)))


def _first_diff(e, c, diff):
    idx = tuple(int(i) for i in diff.nonzero()[0]) if diff.any() else ()
    return f"first at {list(idx)}: eager={e[idx].item()!r} compiled={c[idx].item()!r}"


def off_nan_inputs(eager, label, values):
    """``values`` of the gradient ``label`` with the elements where its input is NaN set to 0
    (``eager``: a run's outcome, with ``labels`` and ``values``, holding ``input NAME after call``).
    The gradient at a NaN input is no defined number (eager's own CPU softshrink backward gives 0 in
    its vector lanes and 1 in the scalar tail, #195075), so no run is a witness there."""
    name = label[len("grad of input "):] if label.startswith("grad of input ") else None
    if name is None or f"input {name} after call" not in eager.labels:
        return values
    x = eager.values[eager.labels.index(f"input {name} after call")]
    if not (isinstance(x, torch.Tensor) and x.dtype.is_floating_point):
        return values
    nan = x.detach().cpu().isnan()
    if not nan.any():
        return values
    return [v.detach().cpu().masked_fill(nan, 0.0) if isinstance(v, torch.Tensor) and v.shape == nan.shape
            and v.dtype.is_floating_point else v for v in values]


def compare(eager, eager_again, ref64, compiled, perturbed=(), strict=False, floor_eps=0.0, reduce_n=1,
            coarse_eps=0.0):
    if eager is None or compiled is None:
        if eager is None and compiled is None:
            return "ok", ""
        return "mismatch", (f"eager gave {'None' if eager is None else 'a tensor'}, "
                            f"compiled {'None' if compiled is None else 'a tensor'}")
    if not isinstance(eager, torch.Tensor):
        if eager != eager_again and eager == eager:
            return "skip", "eager returned different non-tensor values on two runs"
        same = eager == compiled or (isinstance(eager, float) and eager != eager and compiled != compiled)
        return ("ok", "") if same else ("mismatch", f"eager={eager!r} compiled={compiled!r}")
    if not isinstance(compiled, torch.Tensor):
        return "mismatch", f"compiled returned {type(compiled).__name__}, eager a tensor"
    if compiled.shape != eager.shape:
        # a data-dependent shape (nonzero, masked_select, unique) decided by comparing values that
        # sit on a tie: the fp64 run or a perturbed eager run moves it too (a bfloat16 sin landing
        # exactly on the threshold in eager, one float32 rounding off it compiled)
        if any(isinstance(w, torch.Tensor) and w.shape != eager.shape for w in (ref64, *perturbed)):
            return "skip", "a data-dependent shape sits on a tie: the fp64 or a perturbed run changes it too"
        return "mismatch", f"shape: eager {tuple(eager.shape)} compiled {tuple(compiled.shape)}"
    if compiled.dtype != eager.dtype:
        return "mismatch", f"dtype: eager {eager.dtype} compiled {compiled.dtype}"
    e, c = eager.detach().cpu(), compiled.detach().cpu()
    if not isinstance(eager_again, torch.Tensor) or not bitwise_same(e, eager_again.detach().cpu()):
        return "skip", "eager is nondeterministic on this value"
    perturbed = [p.detach().cpu() for p in perturbed
                 if isinstance(p, torch.Tensor) and p.shape == e.shape]
    ref = ref64.detach().cpu() if isinstance(ref64, torch.Tensor) and ref64.shape == e.shape else None
    if not e.dtype.is_floating_point:
        return _compare_exact(e, c, ref, perturbed)
    if strict and e.dtype in (torch.float16, torch.bfloat16):
        return _compare_strict(e, c)
    if ref is None:  # eager is the only witness: it may have rounded where compiled need not
        floor_eps = max(floor_eps, coarse_eps)
    return _compare_float(e, c, ref, perturbed, floor_eps, reduce_n)


def _compare_strict(e, c):
    ed, cd = e.double(), c.double()
    fin_diff = ed.isfinite() != cd.isfinite()
    if fin_diff.any():
        return "mismatch", "strict: finiteness differs from eager; " + _first_diff(e, c, fin_diff)
    mask = ed.isfinite() & cd.isfinite()
    diff = (ed - cd).abs()
    diff[~mask] = 0
    over = diff > _EPS[e.dtype] * ed.abs()
    if not over.any():
        return "ok", ""
    return "mismatch", (f"strict: {int(over.sum())} elements differ from eager by more than one "
                        f"rounding step; max abs diff {float(diff.max()):.3g}; "
                        + _first_diff(e, c, over))


def _compare_exact(e, c, ref, perturbed):
    diff = e != c
    if not diff.any():
        return "ok", ""
    witnesses = [p for p in perturbed if p.dtype == e.dtype]
    if ref is not None:
        witnesses.append(ref.to(e.dtype) if ref.dtype != e.dtype else ref)
    for w in witnesses:
        if (w != e)[diff].any():
            return "skip", "differing elements sit on a tie or rounding boundary"
    n = int(diff.sum())
    return "mismatch", f"{n} of {e.numel()} elements differ; " + _first_diff(e, c, diff)


def _compare_float(e, c, ref, perturbed, floor_eps=0.0, reduce_n=1):
    ed, cd = e.double(), c.double()
    rd = ref.double() if ref is not None and ref.dtype.is_floating_point else ed
    r_fin, e_fin, c_fin = rd.isfinite(), ed.isfinite(), cd.isfinite()
    broke = r_fin & e_fin & ~c_fin
    if broke.any():
        return "mismatch", (f"compiled is non-finite at {int(broke.sum())} elements where eager and "
                            f"fp64 are finite; " + _first_diff(e, c, broke))
    mask = r_fin & e_fin & c_fin
    if not mask.any():
        return "ok", ""
    r, ev, cv = rd[mask], ed[mask], cd[mask]
    err_c, err_e = _rmse(r, cv), _rmse(r, ev)
    mult = 3.0 if (e.dtype in (torch.float16, torch.bfloat16) or r.numel() < 1000) else 2.0
    # a sum of n terms in another order moves by about sqrt(n) rounding steps of the type it
    # accumulates in (float32 for the half types): eager's cascade sum is no standard to hold to
    acc_eps = _EPS[torch.float64] if e.dtype == torch.float64 else _EPS[torch.float32]
    own = _EPS[e.dtype] * (HALF_ROUNDINGS / 4 if e.dtype in (torch.float16, torch.bfloat16) else 1)
    eps = max(own, floor_eps, acc_eps * math.sqrt(max(1, reduce_n)))
    rms = math.sqrt(float(torch.mean(r * r)))
    # 4 roundings of the values' own size, never below same()'s default absolute floor (tol/10):
    # an absolute 4-eps floor under rms 1 let several percent of relative error pass on small values
    floor = 4 * eps * max(1.0, rms) if rms >= 1.0 else max(4 * eps * rms, min(4 * eps, SAME_FLOOR))
    if err_c <= mult * err_e + floor:
        return "ok", ""
    if perturbed:
        err_p = max((_rmse(r, p.double()[mask]) if p.double()[mask].isfinite().all() else math.inf)
                    for p in perturbed)
        if err_c <= mult * max(err_e, err_p) + floor:
            return "skip", "ill-conditioned: a perturbed eager run moves as far from fp64"
    diff = (ed - cd).abs()
    diff[~mask] = 0
    which = "fp64" if ref is not None else "eager (no fp64 run)"
    return "mismatch", (f"rmse vs {which}: compiled {err_c:.3g} > {mult:g} x eager {err_e:.3g} + "
                        f"{floor:.2g}; max abs diff {float(diff.max()):.3g}; "
                        + _first_diff(e, c, diff == diff.max()))
