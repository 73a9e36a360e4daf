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
"""
from __future__ import annotations

from .ir import Ref, TensorType
from .ops import Spec, exact_of
from .ops_forms import envs
from .shapes import dim_value

F = "torch.nn.functional."
# scale -> (numerator, denominator): floor(L * num / den) is (L * num) // den exactly
SCALES = {0.5: (1, 2), 0.75: (3, 4), 1.25: (5, 4), 1.5: (3, 2), 1.75: (7, 4), 2.0: (2, 1), 2.5: (5, 2),
          3.0: (3, 1)}
EXACT_INVERSE = (0.5, 2.0)
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
        pool = EXACT_INVERSE if nearest else tuple(SCALES)
        scales = tuple(ch.choice(pool) for _ in range(nd))
        if ch.boolean(0.3):
            scales = (scales[0],) * nd  # a single float for every dim
        new = tuple(_scaled(e, *SCALES[f]) for e, f in zip(sp, scales))
        if not all(_size_ok(s, e, *SCALES[f]) for e, f in zip(sp, scales)):
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


def _size_ok(s, e, num: int, den: int) -> bool:
    """Every call's output size is at least 1 (interpolate refuses empty outputs)."""
    return all((dim_value(e, env) * num) // den >= 1 for env in envs(s))


RESAMPLE = (
    Spec(F + "interpolate", "resample", interpolate, 1.5),
)
