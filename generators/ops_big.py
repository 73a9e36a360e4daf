"""GEMMs and convolutions big enough for Inductor's autotuned templates.

Contract: specs (``ops.Spec`` protocol) whose operands are made inside the
program at literal sizes of 64..512 (``mm``, ``addmm``, ``bmm``, ``conv2d``),
so that under ``mode="max-autotune"`` Inductor weighs its Triton (or CPU C++)
GEMM/conv templates against aten. The operands depend on the program's data
(a ``tanh`` of a value's sum is added to a ``linspace``) so nothing is
constant-folded, and are scaled so that every result stays within about 2
in magnitude in any float dtype. The result is small enough to be a program
value (at most 16384 elements). Their registry weight is 0 unless
``GenConfig.big_matmul_weight`` turns them on (``GenConfig.for_device`` does,
for the max-autotune modes): they cost compile time that other campaigns
should not pay.
"""
from __future__ import annotations

from .ir import Ref, TensorType
from .ops import Spec

MN = ((64, 64), (64, 128), (128, 64), (128, 128), (64, 256))
KS = (64, 128, 256, 512)


def _operand(n_elems: int, shape: str, scale: float) -> str:
    return (f"(torch.linspace(-{scale!r}, {scale!r}, {n_elems}, dtype=torch.float64, device={{0}}.device).to({{0}}.dtype)"
            f".reshape({shape}) + torch.tanh({{0}}.sum()) * {scale!r})")


def big_gemm(s, spec):
    x = s.pick(lambda v: v.type.is_float)
    if x is None:
        return False
    ch = s.ch
    kind = spec.name.split("[")[0]
    if kind == "torch.nn.functional.conv2d":
        c, hw = ch.choice((64, 128)), ch.choice((8, 16))
        o = 64 if hw == 16 else ch.choice((64, 128))
        inp = _operand(c * hw * hw, f"1, {c}, {hw}, {hw}", 1.0)
        w = _operand(o * c * 9, f"{o}, {c}, 3, 3", round(1.0 / (c * 9), 6))
        tmpl = f"torch.nn.functional.conv2d({inp}, {w}, padding=1)"
        shape = (1, o, hw, hw)
    else:
        m, n = ch.choice(MN)
        k = ch.choice(KS)
        b = 4 if kind == "torch.bmm" else 1
        if b > 1:
            m, n = 64, 64
        a = _operand(b * m * k, f"{m}, {k}" if b == 1 else f"{b}, {m}, {k}", 1.0)
        w = _operand(b * k * n, f"{k}, {n}" if b == 1 else f"{b}, {k}, {n}", round(1.0 / k, 6))
        if kind == "torch.addmm":
            bias = _operand(n, f"{n}", 0.5)
            tmpl = f"torch.addmm({bias}, {a}, {w})"
        else:
            tmpl = f"{kind}({a}, {w})"
        shape = (m, n) if b == 1 else (b, m, n)
    return s.assign(spec.name, tmpl, (Ref(x.name),), TensorType(shape, x.type.dtype), 6.0) is not None


BIG = (
    Spec("torch.mm[big]", "big_matmul", big_gemm, 0.5),
    Spec("torch.addmm[big]", "big_matmul", big_gemm, 0.3),
    Spec("torch.bmm[big]", "big_matmul", big_gemm, 0.2),
    Spec("torch.nn.functional.conv2d[big]", "big_matmul", big_gemm, 0.3),
)
