"""The builder's scope: which typed values exist, and what is safe to do with them.

Contract: a ``Scope`` holds the live ``Val``s of one block. Each Val carries its
static type, a bound on its magnitude (so ops are only drawn when the result
stays finite and clear of overflow), the storage root it aliases (so in-place
ops never write through an overlapping operand) and whether it may be written
in place. Nested scopes (if-branches) see their parent's values; values made
inside a branch stay inside it.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Callable, Iterator

import torch

from .choices import ChoiceStream
from .ir import Assign, Mutate, Stmt, TensorType

# Largest magnitude a value of each dtype may reach: far below overflow, so
# that sums and products of a few such values stay representable.
LIMIT = {"float16": 2e2, "bfloat16": 2e2, "float32": 1e4, "float64": 1e4,
         "int8": 60, "uint8": 120, "int16": 4000, "int32": 1e5, "int64": 1e5, "bool": 1}


@dataclass
class Val:
    name: str
    type: TensorType
    bound: float
    root: str            # storage root: views share their base's root
    writable: bool = True
    is_input: bool = False
    exact: bool = False   # bit-identical in every backend: safe to feed floor/compare/int casts
    contig: bool = False  # statically known to be contiguous (so .view() is legal)

    def __post_init__(self):
        if not self.type.is_float:  # integer and bool values never depend on rounding
            self.exact = True


def promote(a: str, b: str) -> str:
    return str(torch.promote_types(getattr(torch, a), getattr(torch, b))).replace("torch.", "")


@functools.lru_cache(maxsize=None)
def result_type(a: str, a_rank0: bool, b: str, b_rank0: bool) -> str:
    """PyTorch's promotion rule with its zero-dim priority (a 0-dim operand of the same
    category does not widen a dimensioned one), asked of torch itself on dummy tensors."""
    ta = torch.empty(() if a_rank0 else (1,), dtype=getattr(torch, a))
    tb = torch.empty(() if b_rank0 else (1,), dtype=getattr(torch, b))
    return str(torch.result_type(ta, tb)).replace("torch.", "")


def promote_vals(*vals: "Val") -> str:
    """Result dtype of a pointwise op over these values (static ranks decide zero-dim priority)."""
    dtype, rank0 = vals[0].type.dtype, vals[0].type.rank == 0
    for v in vals[1:]:
        dtype = result_type(dtype, rank0, v.type.dtype, v.type.rank == 0)
        rank0 = rank0 and v.type.rank == 0
    return dtype


def can_cast(src: str, dst: str) -> bool:
    return torch.can_cast(getattr(torch, src), getattr(torch, dst))


class Scope:
    def __init__(self, ch: ChoiceStream, counter: Iterator[int], parent: "Scope | None" = None,
                 sizes: dict[str, list[int]] | None = None, max_numel: int = 1 << 14):
        self.ch = ch
        self._counter = counter
        self.parent = parent
        self.vals: list[Val] = []
        self.stmts: list[Stmt] = []
        self.sizes = sizes if sizes is not None else (parent.sizes if parent else {})
        self.max_numel = max_numel if parent is None else parent.max_numel
        self.flags: dict[str, int] = {} if parent is None else parent.flags  # e.g. random ops used
        # integer matmuls (CPU eager has them; CUDA eager rejects them): GenConfig.int_matmul
        self.int_matmul: bool = False if parent is None else parent.int_matmul
        # the case's device (GenConfig.device): factories off the CPU name it
        self.device: str = "cpu" if parent is None else parent.device
        # names of Python-float arguments and globals ops may take as parameters (build sets them)
        self.float_scalars: tuple[str, ...] = () if parent is None else parent.float_scalars

    # ---- queries ---------------------------------------------------------
    def all_vals(self) -> list[Val]:
        return (self.parent.all_vals() if self.parent else []) + self.vals

    def pick(self, pred: Callable[[Val], bool]) -> Val | None:
        cands = [v for v in self.all_vals() if pred(v)]
        if not cands:
            return None
        # Favour recent values so that programs form chains, not stars.
        weights = [1.0 + i for i in range(len(cands))]
        return self.ch.weighted(cands, weights)

    def fits(self, t: TensorType) -> bool:
        """True when every call of the schedule keeps this tensor small."""
        from .shapes import dim_value, numel
        calls = len(next(iter(self.sizes.values()), [0]))
        for i in range(max(calls, 1)):
            env = {k: v[i] for k, v in self.sizes.items()}
            try:
                if dim_value(numel(t.shape), env) > self.max_numel:
                    return False
            except KeyError:
                return False
        return True

    def dim_range(self, dim) -> tuple[int, int]:
        """(smallest, largest) value a dim takes over the calls of the schedule."""
        from .shapes import dim_value
        if isinstance(dim, int):
            return dim, dim
        calls = len(next(iter(self.sizes.values()), [0]))
        vals = [dim_value(dim, {k: v[i] for k, v in self.sizes.items()}) for i in range(max(calls, 1))]
        return min(vals), max(vals)

    def min_dim(self, dim) -> int:
        return self.dim_range(dim)[0]

    def max_dim(self, dim) -> int:
        return self.dim_range(dim)[1]

    def nonempty(self, t: TensorType) -> bool:
        """True when the tensor has at least one element on every call."""
        return all(self.min_dim(d) >= 1 for d in t.shape)

    def within(self, dtype: str, bound: float) -> bool:
        return bound <= LIMIT[dtype]

    # ---- building ----------------------------------------------------------
    def fresh(self) -> str:
        return f"v{next(self._counter)}"

    def assign(self, op: str, template: str, args: tuple, t: TensorType, bound: float,
               view_of: Val | None = None, name: str | None = None, exact: bool | None = None,
               contig: bool = False, writable: bool | None = None) -> Val | None:
        """Append ``name = template(args)``; None (scope unchanged) when too big or unbounded.

        exact: the value is bit-identical in every backend (None: only for non-float dtypes).
        writable: may be updated in place (default: a view inherits its base's, else True).
        """
        if not self.fits(t) or not self.within(t.dtype, bound) or bound != bound:
            return None
        name = name or self.fresh()
        self.stmts.append(Assign(name, op, template, args, t))
        if writable is None:
            writable = view_of.writable if view_of else True
        if exact is None:
            exact = not t.is_float
        val = Val(name, t, bound, view_of.root if view_of else name, writable,
                  exact=exact, contig=contig)
        self.vals.append(val)
        return val

    def mutate(self, op: str, template: str, args: tuple, target: Val, new_bound: float,
               exact: bool | None = None) -> bool:
        """Append an in-place update of ``target``; every alias of its storage takes the new bound.

        exact: the update keeps values bit-identical across backends (None: non-float target).
        """
        if exact is None:
            exact = not target.type.is_float
        if not self.within(target.type.dtype, new_bound) or new_bound != new_bound:
            return False
        self.stmts.append(Mutate(target.name, op, template, args))
        for v in self.all_vals():  # everything aliasing the storage may have changed
            if v.root == target.root:
                v.bound = max(v.bound, new_bound)
                if not exact and v.type.is_float:
                    v.exact = False
        return True

    def child(self) -> "Scope":
        return Scope(self.ch, self._counter, parent=self)


def new_counter() -> Iterator[int]:
    return itertools.count()
