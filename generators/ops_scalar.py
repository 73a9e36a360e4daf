"""Python scalars as op parameters, and float literals meeting fp16/bf16 values.

Contract: specs (``ops.Spec`` protocol). The parameter specs take a Python
float that is a program argument or global (``Scope.float_scalars``; its value
changes between calls through the call schedule) as a clamp bound, a divisor,
or the divisor of ``remainder``/``fmod``. ``remainder``/``fmod`` are
discontinuous at multiples of the divisor, so their operand is first put on
odd multiples of 1/16 (``round(x * 8) / 8 + 1/16``, from an exact value, so
bit-identical in every run) while every scalar the schedule can draw is a
multiple of 1/8: no element ever sits on a jump. Clamp bounds are offset by
non-round constants so no exactly-made value lands on a bound. The literal
specs apply literals such as 1.7 (not representable in fp16/bf16) to half
values, where eager rounds once and a compiler may round twice.
``param_inputs`` adds one float argument for these specs to use.
"""
from __future__ import annotations

from .ir import Input, Ref, TensorType
from .ops import Spec

HALF = ("float16", "bfloat16")
LITERALS = (1.7, 0.1, 3.3, -2.9, 0.3)


def param_inputs(ch, scope, inputs, ctx, p: float) -> list[Input]:
    """With probability p, one more Python-float argument (values per call from the schedule)."""
    if p <= 0 or not ch.boolean(min(p, 1.0)):
        return []
    name = f"x{len(inputs)}"
    ctx.scalars.append((name, "float"))
    return [Input(name, TensorType((), "float64"), kind="float")]


def scalar_param(s, spec):
    names = getattr(s, "float_scalars", ())
    if not names:
        return False
    f = s.ch.choice(names)
    kind = spec.name.split("[")[0]
    if kind == "torch.clamp":
        x = s.pick(lambda v: v.type.is_float)
        if x is None:
            return False
        tmpl = "torch.clamp({0}, min={1} - 2.3183, max={1} + 1.3183)"
        bound = min(x.bound, 3.4)
    elif kind == "torch.div":
        x = s.pick(lambda v: v.type.is_float)
        if x is None:
            return False
        tmpl, bound = "torch.div({0}, {1})", x.bound * 4  # |f| >= 0.25
    else:  # remainder / fmod of quantised exact values
        x = s.pick(lambda v: v.type.is_float and v.exact and v.bound <= (8 if v.type.dtype in HALF else 1000))
        if x is None:
            return False
        q = "(torch.round({0} * 8) / 8 + 0.0625)"
        tmpl = f"{kind}({q}, {{1}})"
        bound = 2.0 if kind == "torch.remainder" else min(x.bound + 1, 2.0)
    return s.assign(spec.name, tmpl, (Ref(x.name), Ref(f)), x.type, bound) is not None


def half_literal(s, spec):
    x = s.pick(lambda v: v.type.dtype in HALF and v.bound <= 50)
    if x is None:
        return False
    c = s.ch.choice(LITERALS)
    form = spec.name.split("[")[0]
    if form == "torch.mul":
        tmpl, bound = "{0} * %r" % c, x.bound * abs(c)
    elif form == "torch.add":
        tmpl, bound = "torch.add({0}, {0}, alpha=%r)" % c, x.bound * (1 + abs(c))
    elif form == "torch.sub":
        tmpl, bound = "{0} - %r" % c, x.bound + abs(c)
    else:
        tmpl, bound = "{0} / %r" % c, x.bound / 0.1
    return s.assign(spec.name, tmpl, (Ref(x.name),), x.type, bound) is not None


SCALAR = (
    Spec("torch.clamp[scalar]", "scalar_param", scalar_param, 0.4),
    Spec("torch.div[scalar]", "scalar_param", scalar_param, 0.2),
    Spec("torch.remainder[scalar]", "scalar_param", scalar_param, 0.3),
    Spec("torch.fmod[scalar]", "scalar_param", scalar_param, 0.3),
    Spec("torch.mul[half_literal]", "pointwise", half_literal, 0.2),
    Spec("torch.add[half_literal]", "pointwise", half_literal, 0.1),
    Spec("torch.sub[half_literal]", "pointwise", half_literal, 0.1),
    Spec("torch.div[half_literal]", "pointwise", half_literal, 0.1),
)
