"""Resampling: ``interpolate`` in every mode, with scale factors or ``size=``.

Contract: specs (``ops.Spec`` protocol) for ``torch.nn.functional.interpolate``
on rank 3/4/5 inputs (1, 2, 3 spatial dims), with per-dimension scale factors
(integer and non-integer), ``recompute_scale_factor``, ``size=`` and
``align_corners``. Scale factors are binary fractions, so ``floor(L * scale)``
is exact and the output size has a static expression. The nearest modes pick a
source pixel with a floor of a coordinate product, which is discontinuous: they
only get scales whose reciprocal is exact (powers of two) and no ``size=``, so
no coordinate lands on a rounding boundary. The interpolating modes (linear,
bilinear, bicubic, trilinear) and area are continuous in the coordinates and
take any scale.

A share of the scale forms (``GUARDED_P``) draws from ``GUARDED`` instead: 1.25 and 0.75 for the
nearest modes too, and the non-dyadic 1.3 and 0.7 for every mode, only where every call changes
every scaled dim's size. Measured on torch 2.13 CPU Inductor (1-D and 2-D, static and dynamic,
``recompute_scale_factor`` on and off, sizes 1..65): nearest at these scales matches eager
bit for bit wherever the size changes; where it stays (L = 2 at 1.25: floor(2.5) = 2) eager's
kernels copy the input, ignoring the scale, while the compiled code applies it (linear: 1.0
against 0.7), so the fp64 run, which takes eager's shortcut too, would blame the compiler.
"""
from __future__ import annotations

import math

from .ir import Ref, TensorType
from .ops import Spec, exact_of
from .ops_forms import envs
from .shapes import dim_value

F = "torch.nn.functional."
# scale -> (numerator, denominator): floor(L * num / den) is (L * num) // den exactly
SCALES = {0.5: (1, 2), 0.75: (3, 4), 1.25: (5, 4), 1.5: (3, 2), 1.75: (7, 4), 2.0: (2, 1), 2.5: (5, 2),
          3.0: (3, 1)}
EXACT_INVERSE = (0.5, 2.0)
#: non-integer scales for every mode, the nearest ones included, only where no dim keeps its size
#: (see the module docstring); non-dyadic ones: floor(L * 1.3) is checked per call in float64
GUARDED = {1.25: (5, 4), 0.75: (3, 4), 1.3: (13, 10), 0.7: (7, 10)}
GUARDED_P = 0.5  # chance that a scale_factor form draws its scales from GUARDED
MODES = {1: ("nearest", "nearest-exact", "linear", "area"), 2: ("nearest", "nearest-exact", "bilinear", "bicubic",
                                                                   "area"),
         3: ("nearest", "nearest-exact", "trilinear", "area")}
CORNERS = ("linear", "bilinear", "bicubic", "trilinear")


def _scaled(e, num: int, den: int):
    if isinstance(e, int):
        return (e * num) // den
    return f"(({e})*{num})//{den}" if den != 1 else f"({e})*{num}"


def interpolate(s, spec):
    x = s.pick(lambda v: v.type.dtype in ("float32", "float64") and 3 <= v.type.rank <= 5 and s.nonempty(v.type))
    if x is None:
        return False
    ch = s.ch
    nd = x.type.rank - 2
    mode = ch.choice(MODES[nd])
    nearest = mode.startswith("nearest")
    sp = x.type.shape[2:]
    kw = []
    if not nearest and ch.boolean(0.3):  # size=: literal output sizes
        new = tuple(ch.choice((1, 2, 3, 5, 8)) for _ in range(nd))
        kw.append(f"size={new if nd > 1 else new[0]}")
    else:
        guarded = ch.boolean(GUARDED_P)
        table = GUARDED if guarded else SCALES
        pool = tuple(GUARDED) if guarded else EXACT_INVERSE if nearest else tuple(SCALES)
        scales = tuple(ch.choice(pool) for _ in range(nd))
        if ch.boolean(0.3):
            scales = (scales[0],) * nd  # a single float for every dim
        new = tuple(_scaled(e, *table[f]) for e, f in zip(sp, scales))
        if not all(_size_ok(s, e, *table[f], f if guarded else None) for e, f in zip(sp, scales)):
            return False
        kw.append(f"scale_factor={scales[0] if len(set(scales)) == 1 and ch.boolean() else scales}")
        if ch.boolean(0.3):
            kw.append("recompute_scale_factor=True")
    if mode in CORNERS:
        kw.append(f"align_corners={ch.boolean()}")
    tmpl = f"{F}interpolate({{0}}, {', '.join(kw)}, mode='{mode}')"
    bound = x.bound * (1.6 ** nd if mode == "bicubic" else 1.0)
    t = TensorType(x.type.shape[:2] + tuple(new), x.type.dtype)
    return s.assign(spec.name, tmpl, (Ref(x.name),), t, bound,
                    exact=exact_of(x.type.dtype, nearest, x)) is not None


def _size_ok(s, e, num: int, den: int, guarded: float | None = None) -> bool:
    """Every call's output size is at least 1 (interpolate refuses empty outputs). A guarded
    scale also needs every call's size to change (eager copies a dim whose size stays, ignoring
    the scale; compiled code applies it) and torch's float64 floor(L * scale) to be the static
    (L * num) // den."""
    for env in envs(s):
        n = dim_value(e, env)
        out = (n * num) // den
        if out < 1 or guarded is not None and (out == n or math.floor(n * guarded) != out):
            return False
    return True


RESAMPLE = (
    Spec(F + "interpolate", "resample", interpolate, 1.5),
)
