"""Eager-kernel audit: finds aten kernels whose eager result is not a function of their inputs.

Contract: ``with KernelAudit() as audit: <eager run>`` re-runs, under a TorchDispatchMode,
every non-mutating aten op that receives a tensor argument with a non-trivial layout (a view:
zero or permuted strides, a storage offset, or a storage larger than the view) twice more:

* on a *fenced* copy of each such argument: same sizes, strides and offset, laid inside a
  fresh storage whose every element outside the view is NaN (or the type's extreme value).
  A correct kernel reads only the elements the view addresses, so its result must be the
  same (exactly for integers, to 1e-3 for floats, NaN nowhere new); a kernel that reads
  past its input picks up the fence and differs;
* on contiguous copies: float results must agree to 1e-3 relative (rounding may move with
  the summation order; a wrong element does not). Integer results (indices, which ties
  may legitimately move) are not compared here.

``audit.flagged`` lists ``"aten.op: why"`` for each kernel caught. The caller treats every
float value of such a call as unjudgeable: when eager's own kernel reads memory it does not
own, its answer and the compiled one (which may call the same kernel) are both arbitrary, and
PyTorch maintainers reject a compiler report built on them. The RNG state is restored before
each re-run, so random ops see the same stream. The audit only runs when a call already has a
numeric mismatch; it costs three executions of the audited ops, nothing else.

``ZeroSignAudit`` is the witness for a zero-sign mismatch: it re-runs every pointwise aten op
with a float result (up to ``SIGN_AUDIT_MAX`` elements) once per element, on one-element slices
of its broadcast arguments. A CPU kernel runs one element in its scalar loop, and most elements
of a longer tensor in its vector lanes; where the two give zeros of different signs (softshrink:
+0.0 in the vector lanes, -0.0 in the scalar tail, for a small negative input), eager itself
gives either zero, and a compiled zero of the other sign is no bug. ``audit.flagged`` lists
``"aten.op: why"``, and ``audit.reached(outcome)`` the values of the run that such a kernel's
result flows into (by storage); the caller leaves the sign of those values' zeros unjudged (their
values, and every other value's zero sign, stay judged).
"""
from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from fuzzcomp.oracles.fp64rule import bitwise_same

_RANDOM = ("rand", "dropout", "bernoulli", "normal", "multinomial", "poisson", "exponential",
           "uniform", "cauchy", "geometric", "log_normal")
_FENCE = 64  # elements of fence before and after the view
# ops whose arguments name absolute storage positions: a fenced copy moves them on purpose
_ABSOLUTE = ("aten.as_strided", "aten.set_", "aten._reshape_alias")
# ops whose result is uninitialised memory by contract
_UNINITIALISED = ("aten.empty", "aten.new_empty", "aten.empty_like", "aten.empty_strided")


def _rng_state():
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and \
        torch.cuda.is_initialized() else None
    return torch.get_rng_state(), cuda


def _set_rng_state(state):
    torch.set_rng_state(state[0])
    if state[1] is not None:
        torch.cuda.set_rng_state_all(state[1])


def _plain_view(t) -> bool:
    """True when ``t`` addresses its whole storage densely from offset 0 (nothing to audit)."""
    if t.layout != torch.strided or t.is_sparse or t.numel() == 0:
        return True
    try:
        nbytes = t.untyped_storage().nbytes()
    except Exception:  # a wrapper without storage: nothing to audit
        return True
    return (t.is_contiguous() and t.storage_offset() == 0
            and nbytes == t.numel() * t.element_size())


def _fence_value(dtype):
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).min


def _fenced(t):
    """A copy of view ``t`` at the same strides and offset inside a storage full of fence values:
    only the elements the view addresses hold data (gaps between strides are fenced too)."""
    extent = 1 + sum((s - 1) * abs(st) for s, st in zip(t.shape, t.stride()))
    length = t.storage_offset() + extent
    where = torch.arange(length, device=t.device).as_strided(t.shape, t.stride(), t.storage_offset())
    base = torch.full((length + 2 * _FENCE,), _fence_value(t.dtype), dtype=t.dtype, device=t.device)
    with torch.no_grad():
        base[where.reshape(-1) + _FENCE] = t.detach().reshape(-1)
    return base.as_strided(t.shape, t.stride(), t.storage_offset() + _FENCE)


def _tensors(tree) -> list:
    return [t.detach() for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def _unchanged(a, b) -> bool:
    """Same layout, same values: exact for integers (CPU and GPU kernels are deterministic
    there), ``_close`` for floats (GPU atomics may reorder a sum between two runs)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return _close(a, b) if a.dtype.is_floating_point else bitwise_same(a, b)


def _close(a, b) -> bool:
    """Float results agree to 1e-3 relative, NaN only where NaN; other dtypes are not judged."""
    if a.shape != b.shape or not a.dtype.is_floating_point:
        return True
    a, b = a.double(), b.double()
    both_nan = a.isnan() & b.isnan()
    ok = both_nan | (a == b) | ((a - b).abs() <= 1e-3 * torch.maximum(a.abs(), b.abs()).clamp_min(1.0))
    return bool(ok.all())


class _Audit(TorchDispatchMode):
    """A dispatch mode that lists ``"aten.op: why"`` once per kernel and reason in ``flagged``."""

    def __init__(self):
        super().__init__()
        self.flagged: list[str] = []

    def _flag(self, func, why):
        entry = f"{func}: {why}"
        if entry not in self.flagged:
            self.flagged.append(entry)

    def reached(self, outcome) -> list[str] | None:
        """The labels of ``outcome`` (the audited run's) that a flagged kernel can reach; None:
        every value of the call."""
        return None


class KernelAudit(_Audit):

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func)
        if func._schema.is_mutable or name.startswith(_ABSOLUTE + _UNINITIALISED) or not any(
                isinstance(a, torch.Tensor) and not _plain_view(a)
                for a in tree_flatten((args, kwargs))[0]):
            return func(*args, **kwargs)
        rng = _rng_state()  # only for the ops replayed below
        out = func(*args, **kwargs)
        try:
            self._audit(func, name, args, kwargs, out, rng)
        except Exception:  # the audit is a witness: an op it cannot replay is simply not audited
            pass
        return out

    def _replay(self, func, args, kwargs, rng, copy):
        def conv(a):
            return copy(a) if isinstance(a, torch.Tensor) and not _plain_view(a) else a
        saved = _rng_state()
        _set_rng_state(rng)
        try:
            with torch.no_grad():
                return func(*tree_map(conv, args), **tree_map(conv, kwargs))
        finally:
            _set_rng_state(saved)

    def _audit(self, func, name, args, kwargs, out, rng):
        results = _tensors(out)
        if not results:
            return
        fenced = _tensors(self._replay(func, args, kwargs, rng, _fenced))
        if len(fenced) == len(results) and not all(_unchanged(a, b) for a, b in zip(results, fenced)):
            self._flag(name, "reads memory outside its input view")
            return
        if any(r in name for r in _RANDOM):
            return
        dense = _tensors(self._replay(func, args, kwargs, rng, lambda a: a.detach().contiguous().clone()))
        if len(dense) == len(results) and not all(_close(a, b) for a, b in zip(results, dense)):
            self._flag(name, "result changes when its input view is made contiguous")


SIGN_AUDIT_MAX = 1024  # elements of a result re-run one by one (a few ms of dispatches)


def _one_by_one(func, args, kwargs, shape):
    """``func`` on each element alone: every tensor argument broadcast to ``shape`` and sliced to
    one element (0-d tensors and non-tensors as they are); the results flattened into one."""
    flat, spec = tree_flatten((args, kwargs))
    spread = [a.detach().broadcast_to(shape).reshape(-1) if isinstance(a, torch.Tensor) and a.dim() > 0 else a
              for a in flat]
    pieces = []
    for i in range(int(torch.Size(shape).numel())):
        one = [a[i:i + 1] if isinstance(a, torch.Tensor) and a.dim() > 0 else a for a in spread]
        a1, k1 = tree_unflatten(one, spec)
        pieces.append(func(*a1, **k1).reshape(-1))
    return torch.cat(pieces)


def _storages(tree) -> set[int]:
    """The storages (data pointers) of the tensors in ``tree``; none for an empty one."""
    out = set()
    for t in tree_flatten(tree)[0]:
        if isinstance(t, torch.Tensor):
            try:
                ptr = t.untyped_storage().data_ptr()
            except Exception:  # a wrapper without storage
                continue
            if ptr:
                out.add(ptr)
    return out


class ZeroSignAudit(_Audit):
    """Flags pointwise float kernels whose zeros change sign when run one element at a time, and
    follows what they feed: ``reached`` names the values of the run a flagged kernel's result
    can reach (by storage, through views, in-place writes and every later op reading it; a
    tainted value read into Python taints everything after it). A storage freed and reused
    stays tainted: the scope can only grow, never miss a value."""

    def __init__(self, limit: int = SIGN_AUDIT_MAX):
        super().__init__()
        self.limit = limit
        self.tainted: set[int] = set()
        self.everything = False

    def reached(self, outcome) -> list[str] | None:
        if not self.flagged:
            return []
        if self.everything or outcome is None or getattr(outcome, "error", None):
            return None
        return [lab for lab, v in zip(outcome.labels, outcome.values)
                if isinstance(v, torch.Tensor) and _storages(v) & self.tainted]

    def _follow(self, func, args, kwargs, out):
        """Taint what an op returns or writes when it reads a tainted storage."""
        if self.everything or not self.tainted or not _storages((args, kwargs)) & self.tainted:
            return
        results = tree_flatten(out)[0]
        if results and not any(isinstance(t, torch.Tensor) for t in results):
            self.everything = True  # a value read into Python (item, tolist) can go anywhere
            return
        self.tainted |= _storages(out)
        if func._schema.is_mutable:
            self.tainted |= _storages((args, kwargs))

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self._follow(func, args, kwargs, out)
        if func._schema.is_mutable or torch.Tag.pointwise not in func.tags or not isinstance(out, torch.Tensor) \
                or not out.dtype.is_floating_point or out.dim() == 0 or out.numel() > self.limit \
                or any(r in str(func) for r in _RANDOM):
            return out
        try:
            with torch.no_grad():
                flat = out.detach().reshape(-1)
                zero = flat == 0
                if bool(zero.any()):
                    alone = _one_by_one(func, args, kwargs, out.shape)
                    both = zero & (alone == 0)
                    if bool((flat[both].signbit() != alone[both].signbit()).any()):
                        self._flag(func, "gives either sign of zero (its vector lanes against its scalar loop)")
                        self.tainted |= _storages(out)
        except Exception:  # a witness only: an op it cannot replay element by element is not audited
            pass
        return out
