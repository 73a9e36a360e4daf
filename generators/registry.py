"""The weighted list of op specs the builder draws from.

Contract: ``REGISTRY`` is an ordered tuple of specs with unique names; order and
weights are part of the generator version (changing them changes programs for
a seed, so bump ``GENERATOR_VERSION`` in ``build.py``). ``callable_name(spec)``
strips a ``[variant]`` suffix: the distinct torch callables exercised are
``{callable_name(s) for s in REGISTRY}``.
"""
from __future__ import annotations

from .ops_index import INDEX
from .ops_inplace import INPLACE
from .ops_math import MATH
from .ops_pointwise import BINARY, COMPARE, TERNARY, UNARY
from .ops_view import VIEW
from .ops_big import BIG
from .ops_forms import FORMS
from .ops_grad import GRAD
from .ops_inplace_view import INPLACE_VIEW
from .ops_resample import RESAMPLE
from .ops_scalar import SCALAR
from .ops_scatter import SCATTER
from .edges import FAMILIES as EDGE_FAMILIES
from .tail_forms import FAMILIES as TAIL_FAMILIES

REGISTRY = UNARY + BINARY + COMPARE + TERNARY + MATH + VIEW + INDEX + INPLACE \
    + FORMS + RESAMPLE + SCALAR + SCATTER + INPLACE_VIEW + GRAD + BIG

_names = [op.name for op in REGISTRY]
assert len(_names) == len(set(_names)), "duplicate op names in REGISTRY"

FAMILIES = tuple(sorted({op.family for op in REGISTRY}))


def callable_name(name: str) -> str:
    """``"Tensor.mul_[slice]"`` -> ``"Tensor.mul_"`` (the torch callable a spec exercises)."""
    return name.split("[", 1)[0]


def distinct_callables() -> set[str]:
    return {callable_name(n) for n in _names}


#: every op name with a family: the registry's specs, and the ops the tail forms and edges emit
FAMILY_OF = {op.name: op.family for op in REGISTRY} | {n: f for n, f in (TAIL_FAMILIES | EDGE_FAMILIES).items()
                                                       if n not in _names}


class OpFilterError(ValueError):
    pass


def _close(word: str, names) -> str:
    import difflib
    near = difflib.get_close_matches(word, sorted(names), n=4, cutoff=0.6)
    return f"; did you mean {', '.join(near)}?" if near else ""


def op_filter_mask(ops=(), families=(), exclude=()) -> tuple[bool, ...]:
    """Which REGISTRY entries a campaign may draw: ``ops`` (spec or callable names) and ``families``
    select (their union; both empty = all), ``exclude`` (names or families) removes. Unknown names
    raise OpFilterError listing close matches; a filter that leaves nothing raises too."""
    names = set(_names) | distinct_callables()
    for word in (*ops, *exclude):
        if word not in names and word not in FAMILIES:
            raise OpFilterError(f"unknown op {word!r}{_close(word, names | set(FAMILIES))}")
    for word in families:
        if word not in FAMILIES:
            raise OpFilterError(f"unknown op family {word!r}{_close(word, FAMILIES)}; "
                                f"families: {', '.join(FAMILIES)}")
    chosen = set(ops) | set(families)
    drop = set(exclude)
    mask = tuple((not chosen or bool({op.name, callable_name(op.name), op.family} & chosen))
                 and not {op.name, callable_name(op.name), op.family} & drop for op in REGISTRY)
    if not any(mask):
        raise OpFilterError("the op filter leaves no op to draw")
    return mask
