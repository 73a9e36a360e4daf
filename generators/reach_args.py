"""Special and out-of-domain values reaching op arguments, not only inputs.

Contract: ``BUILDERS`` maps each capability of ``reach.ARG_CAPABILITIES`` to a builder
``(ch, scope) -> str | None`` that appends a few statements to ``scope.stmts`` and returns the
name of the value to return (None, nothing appended, when it cannot apply). Their values never
enter ``scope.vals``: nothing else is built on them. ``build.py`` runs them after the call
schedule (the capabilities are the last draws of the stream), at the end of the body.

* ``fill_softmax``: a constant fill (0, -0.0, -1, 0.5, +-inf, NaN) fed to an unguarded log,
  log2, log1p, acosh or sqrt (so -inf or NaN), optionally mixed with data, then softmax or
  log_softmax: rows of -inf and NaN through the max-subtracting reduction.
* ``inf_divisor``: ``remainder``/``fmod`` by +-inf or a huge finite divisor, a Python float or
  a filled tensor (``remainder(-1, inf)`` is inf in eager: the divisor's sign, not NaN).
* ``half_divisor``: ``remainder``/``fmod`` of a float16/bfloat16 input by a Python float the
  dtype cannot represent (0.1, 1.3, ...): eager rounds the divisor to the tensor's dtype, the
  fp64 run does not, so compiled code may keep it wider but never round it worse.

The remainder operands are quantised to odd multiples of 1/16 (``round(x * 8) / 8 + 1/16``,
from an exact value): never zero, so no zero result has a sign to argue about, and for the half
divisors the operand bound keeps every quotient at least ``MARGIN`` from an integer under each
rounding of the divisor (float64, float32, float16, bfloat16): eager, compiled and the fp64 run
take the same floor. ``SPECIAL_SOURCES`` names the ops that bring special values in (the
oracles' exact rule and its taint analysis start there); ``FEATURE_OF`` maps ops to features.
"""
from __future__ import annotations

import functools
import math
import struct

from .choices import ChoiceStream
from .ir import Assign, Ref, TensorType
from .scope import Scope

FLOATS = ("float32", "float64", "float16", "bfloat16")
FILL_VALUES = ("0.0", "-0.0", "-1.0", "0.5", "float('inf')", "float('-inf')", "float('nan')")
UNGUARDED = ("torch.log", "torch.log2", "torch.log1p", "torch.acosh", "torch.sqrt")
#: the largest finite divisor per dtype (a Python float the dtype still holds)
HUGE = {"float32": "3.0e38", "float64": "1.0e300", "float16": "6.0e4", "bfloat16": "3.0e38"}
HALF_DIVISORS = (0.1, 1.3, 0.3, 0.7, 2.9)
MARGIN = 0.002
Q = "(torch.round({0} * 8) / 8 + 0.0625)"

SPECIAL_SOURCES = frozenset({"const:tensor", "sarg:fill", "sarg:inf_remainder", "sarg:inf_fmod"})
FEATURE_OF = {"fill_softmax": "fill_softmax", "inf_divisor": "inf_divisor", "half_divisor": "half_divisor"}
_OP_FEATURE = {"sarg:fill": "fill_softmax", "sarg:inf_remainder": "inf_divisor", "sarg:inf_fmod": "inf_divisor",
               "sarg:half_remainder": "half_divisor", "sarg:half_fmod": "half_divisor"}


def _free(v) -> bool:
    return not v.name.startswith(("self.", "G"))


def fill_softmax(ch: ChoiceStream, scope: Scope) -> str | None:
    x = scope.pick(lambda v: v.type.dtype in FLOATS and v.type.rank >= 1 and _free(v))
    if x is None:
        return None
    c = ch.choice(FILL_VALUES)
    fn = ch.choice(UNGUARDED)
    mix = ch.weighted(("none", "add", "where"), (2, 2, 1))
    red = ch.choice(("torch.softmax", "torch.log_softmax"))
    dim = ch.integer(-1, x.type.rank - 1)
    t = x.type
    a, b = scope.fresh(), scope.fresh()
    scope.stmts.append(Assign(a, "sarg:fill", f"torch.full_like({{0}}, {c})", (Ref(x.name),), t))
    scope.stmts.append(Assign(b, "sarg:" + fn, f"{fn}({{0}})", (Ref(a),), t))
    if mix == "add":
        m = scope.fresh()
        scope.stmts.append(Assign(m, "sarg:mix_add", "{0} + {1}", (Ref(b), Ref(x.name)), t))
        b = m
    elif mix == "where" and x.exact:  # a mask from exact values: the same in every run
        m = scope.fresh()
        scope.stmts.append(Assign(m, "sarg:mix_where", "torch.where({1} > 0, {0}, {1})", (Ref(b), Ref(x.name)), t))
        b = m
    out = scope.fresh()
    scope.stmts.append(Assign(out, "sarg:" + red.split(".")[-1], f"{red}({{0}}, {dim})", (Ref(b),), t))
    return out


def inf_divisor(ch: ChoiceStream, scope: Scope) -> str | None:
    x = scope.pick(lambda v: v.type.dtype in FLOATS and v.exact and v.bound <= 1000 and _free(v))
    if x is None:
        return None
    op = ch.choice(("remainder", "fmod"))
    d = ch.choice(("float('inf')", "float('-inf')", HUGE[x.type.dtype], "-" + HUGE[x.type.dtype]))
    if ch.boolean(0.3):  # a filled tensor divisor instead of a Python float
        d = f"torch.full_like({{0}}, {d})"
    out = scope.fresh()
    scope.stmts.append(Assign(out, f"sarg:inf_{op}", f"torch.{op}({Q}, {d})", (Ref(x.name),), x.type))
    return out


def half_divisor(ch: ChoiceStream, scope: Scope) -> str | None:
    d = ch.choice(HALF_DIVISORS)
    # a half input, never a value cast to half in the program: the fp64 run upcasts inputs but
    # keeps the program's own casts, so after a cast it rounds the divisor as eager does and is
    # no witness (compiled keeping the divisor in float32 was flagged against it)
    x = scope.pick(lambda v: v.type.dtype in ("float16", "bfloat16") and v.is_input and _free(v)
                   and v.bound <= safe_bound(d))
    if x is None:
        return None
    op = ch.choice(("remainder", "fmod"))
    out = scope.fresh()
    scope.stmts.append(Assign(out, f"sarg:half_{op}", f"torch.{op}({Q}, {d!r})", (Ref(x.name),), x.type))
    return out


BUILDERS = {"fill_softmax": fill_softmax, "inf_divisor": inf_divisor, "half_divisor": half_divisor}


def arg_features(case) -> set[str]:
    from .ir import walk_program
    return {_OP_FEATURE[s.op] for s in walk_program(case.program) if getattr(s, "op", "") in _OP_FEATURE}


# ---- the operand bound that keeps every quotient off an integer -----------------------------
def _round_to(d: float, dtype: str) -> float:
    if dtype == "float64":
        return d
    if dtype == "float32":
        return struct.unpack("f", struct.pack("f", d))[0]
    if dtype == "float16":
        return struct.unpack("e", struct.pack("e", d))[0]
    bits = struct.unpack("I", struct.pack("f", d))[0]  # bfloat16: round to nearest even in float32 bits
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("f", struct.pack("I", bits))[0]


@functools.lru_cache(maxsize=None)
def safe_bound(d: float, limit: float = 8.0) -> float:
    """The largest x bound (at most ``limit``) for which every quantised operand (2k+1)/16 with
    |value| <= bound + 1/8 has the same floor(value / r) for every rounding r of ``d``, each at
    least ``MARGIN`` from an integer."""
    rs = [_round_to(d, t) for t in ("float64", "float32", "float16", "bfloat16")]
    k = 0
    while True:
        v = (2 * k + 1) / 16
        for s in (v, -v):
            qs = [s / r for r in rs]
            if len({math.floor(q) for q in qs}) > 1 or min(abs(q - round(q)) for q in qs) < MARGIN:
                return max(0.0, min(limit, v - 0.25))
        if v > limit + 0.0625:
            return limit
        k += 1
