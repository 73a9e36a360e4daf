"""Casts and creation ops of the math tables: ``.to``/``type_as`` casts, ``*_like`` creation,
``arange`` and ``torch.scalar_tensor`` (their Specs live in ``ops_math.MATH``).
"""
from __future__ import annotations

from .ir import FLOAT_DTYPES, INT_DTYPES, Ref, TensorType
from .ops import DT, exact_of, max_size
from .scope import LIMIT


def cast(s, spec):
    x = s.pick(lambda v: True)
    if x is None:
        return False
    method = {"Tensor.float": "float32", "Tensor.double": "float64", "Tensor.half": "float16",
              "Tensor.bfloat16": "bfloat16", "Tensor.int": "int32", "Tensor.long": "int64",
              "Tensor.bool": "bool", "Tensor.short": "int16", "Tensor.char": "int8", "Tensor.byte": "uint8"}
    if spec.name in method:
        dst = method[spec.name]
        tmpl = "{0}.%s()" % spec.name.split(".")[1]
    else:
        dst = s.ch.choice(FLOAT_DTYPES + INT_DTYPES + ("bool",))
        tmpl = "{0}.to(torch.%s)" % dst if spec.name == "Tensor.to" else "{0}.type(torch.%s)" % dst
    if dst == x.type.dtype:
        return False
    if x.type.is_float and dst not in FLOAT_DTYPES and not x.exact:
        return False  # float -> int/bool is a step function: only on exact values
    if dst == "uint8" and x.type.dtype != "bool":
        return False  # negative -> uint8 wraps (and is undefined for floats)
    if x.bound > LIMIT[dst] and dst != "bool":
        return False
    bound = 1.0 if dst == "bool" else x.bound
    ex = None
    if dst in FLOAT_DTYPES:
        ex = x.exact and (not x.type.is_float or _widens(x.type.dtype, dst))
    return s.assign(spec.name, tmpl, (Ref(x.name),), TensorType(x.type.shape, dst), bound, exact=ex,
                    contig=x.contig) is not None


def _widens(a: str, b: str) -> bool:
    return b == "float64" or (b == "float32" and a in ("float16", "bfloat16"))


def type_as(s, spec):
    x = s.pick(lambda v: v.type.dtype in DT["float"])
    o = s.pick(lambda v: v.type.dtype in FLOAT_DTYPES and v is not x)
    if x is None or o is None or o.type.dtype == x.type.dtype or x.bound > LIMIT[o.type.dtype]:
        return False
    return s.assign(spec.name, "{0}.type_as({1})", (Ref(x.name), Ref(o.name)),
                    TensorType(x.type.shape, o.type.dtype), x.bound,
                    exact=exact_of(o.type.dtype, _widens(x.type.dtype, o.type.dtype), x)) is not None


def like(s, spec):
    x = s.pick(lambda v: True)
    if x is None:
        return False
    kind = spec.name.split(".")[-1]
    tmpl = {"zeros_like": "torch.zeros_like({0})", "ones_like": "torch.ones_like({0})",
            "full_like": "torch.full_like({0}, %s)" % ("True" if x.type.is_bool else "3"),
            "empty_like": "torch.empty_like({0}).fill_(1)", "new_zeros": "{0}.new_zeros({0}.shape)",
            "new_ones": "{0}.new_ones({0}.shape)", "new_full": "{0}.new_full({0}.shape, 2)",
            "rand_like": "torch.rand_like({0}, dtype=torch.float32).to({0}.dtype)",
            "randn_like": "torch.randn_like({0}, dtype=torch.float32).to({0}.dtype)"}[kind]
    random = kind.startswith("rand")
    if random and (s.flags.get("random") or not x.type.is_float):
        return False
    ok = s.assign(spec.name, tmpl, (Ref(x.name),), x.type, 5.0 if random else 3.0, contig=True,
                  exact=not random) is not None
    if ok and random:
        s.flags["random"] = 1
    return ok


def arange(s, spec):
    x = s.pick(lambda v: v.type.rank >= 1)
    if x is None:
        return False
    d = s.ch.integer(0, x.type.rank - 1)
    n = x.type.shape[d]
    hi = max_size(s, n)
    if spec.name == "torch.arange":
        as_x = x.type.dtype in ("float32", "float64", "int64", "int32") and s.ch.boolean()
        dt = ", dtype={0}.dtype" if as_x else ""
        return s.assign(spec.name, "torch.arange({0}.shape[%d]%s, device={0}.device)" % (d, dt), (Ref(x.name),),
                        TensorType((n,), x.type.dtype if as_x else "int64"), hi, contig=True, exact=True) is not None
    if spec.name == "torch.linspace":
        dt = x.type.dtype if x.type.is_float else "float32"
        # a half type's linspace is built in float64 and rounded once: eager rounds its step to
        # the half type first, its decomposition does not, and neither is the compiler's error
        made = "dtype=torch.float64, device={0}.device).to(torch.%s)" % dt if dt in ("float16", "bfloat16") \
            else "dtype=torch.%s, device={0}.device)" % dt
        return s.assign(spec.name, "torch.linspace(-1, 1, {0}.shape[%d], %s" % (d, made),
                        (Ref(x.name),), TensorType((n,), dt), 1.0, contig=True) is not None
    if spec.name == "torch.full":
        dt = x.type.dtype
        v = "True" if dt == "bool" else ("1.5" if x.type.is_float else "2")
        return s.assign(spec.name, "torch.full({0}.shape, %s, dtype={0}.dtype, device={0}.device)" % v, (Ref(x.name),),
                        x.type, 2.0, contig=True, exact=True) is not None
    if spec.name in ("torch.zeros", "torch.ones"):
        return s.assign(spec.name, "%s({0}.shape, dtype={0}.dtype, device={0}.device)" % spec.name, (Ref(x.name),), x.type, 1.0,
                        contig=True, exact=True) is not None
    if spec.name == "torch.eye":
        return s.assign(spec.name, "torch.eye({0}.shape[%d], dtype={0}.dtype, device={0}.device)" % d, (Ref(x.name),),
                        TensorType((n, n), x.type.dtype), 1.0, contig=True, exact=True) is not None
    return False


def scalar_tensor(s, spec):
    x = s.pick(lambda v: v.type.is_float)
    if x is None:
        return False
    tmpl = "torch.tensor(0.5, dtype={0}.dtype, device={0}.device) * {0}" if spec.name == "torch.tensor" else \
        "torch.scalar_tensor(2, dtype={0}.dtype) + {0}"
    return s.assign(spec.name, tmpl, (Ref(x.name),), x.type, x.bound + 2) is not None
