"""In-place ops whose destination partially overlaps one of their sources: a documented user error.

Contract: ``watching(fn)`` returns ``fn`` wrapped to run under a function mode that looks at
every in-place op (a name ending in ``_``, or ``Tensor.__setitem__``), and the list it fills with
"op: description" for each one whose written tensor shares memory with another tensor argument
without being the same view of it (``partially_overlaps``).
PyTorch forbids that (the result depends on the order elements are visited) but eager raises
only when its overlap check can tell; on a strided base (``x[..., ::2]``) and its transpose it
gives up, runs, and returns one arbitrary order's answer, so compiled code "differs" and a
compile of it may fail in ways no valid program shows (CPU seed 1504004897:
``x2.add_(x1)`` with ``x2 = x1.t()``). Such a case is not judged, like a write into an input
whose own elements overlap.

Memory is compared element by element (byte offsets of every element) for tensors of up to
``EXACT_LIMIT`` elements, and by byte range above that (conservative: interleaved views are
then taken as overlapping and the case is left unjudged, never misjudged).
"""
from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from fuzzcomp.run.runtime import _tensors

EXACT_LIMIT = 1 << 16


def _span(t: torch.Tensor) -> tuple[int, int]:
    item = t.element_size()
    lo = t.storage_offset() * item
    hi = lo + (sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride())) + 1) * item
    return lo, hi


def _offsets(t: torch.Tensor) -> set[int]:
    """The byte offset of every element of ``t`` in its storage (every byte of it)."""
    idx = torch.zeros((), dtype=torch.int64)
    for n, s in zip(t.shape, t.stride()):
        idx = idx.unsqueeze(-1) + torch.arange(n, dtype=torch.int64) * s
    base = (idx.reshape(-1) + t.storage_offset()) * t.element_size()
    return {int(b) + k for b in base.tolist() for k in range(t.element_size())}


def _same_view(a: torch.Tensor, b: torch.Tensor) -> bool:
    return (a.storage_offset() * a.element_size() == b.storage_offset() * b.element_size()
            and a.shape == b.shape and a.stride() == b.stride() and a.dtype == b.dtype)


def partially_overlaps(dst: torch.Tensor, src: torch.Tensor) -> bool:
    """``dst`` and ``src`` share some memory without being the same view of it."""
    if dst.numel() == 0 or src.numel() == 0 or dst.layout != torch.strided or src.layout != torch.strided:
        return False
    try:
        if dst.untyped_storage().data_ptr() != src.untyped_storage().data_ptr():
            return False
    except (RuntimeError, NotImplementedError):  # no storage to compare (a fake or sparse tensor)
        return False
    if _same_view(dst, src):
        return False
    (a0, a1), (b0, b1) = _span(dst), _span(src)
    if a1 <= b0 or b1 <= a0:
        return False
    if dst.numel() > EXACT_LIMIT or src.numel() > EXACT_LIMIT:
        return True
    return bool(_offsets(dst) & _offsets(src))


def _name(func) -> str:
    return getattr(func, "__name__", "") or str(func)


class _Watch(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = _name(func)
        # inside a higher-order op Dynamo traces this mode: look only where eager runs
        if not torch.compiler.is_compiling() and args and isinstance(args[0], torch.Tensor) and \
                (name == "__setitem__" or (name.endswith("_") and not name.startswith("_"))):
            dst = args[0]
            sources: list = []
            _tensors(list(args[1:]) + list(kwargs.values()), sources)
            for src in sources:
                if src is not dst and partially_overlaps(dst, src):
                    self.found.append(f"{name}: its destination {tuple(dst.shape)} stride {dst.stride()} "
                                      f"shares memory with an argument {tuple(src.shape)} stride {src.stride()}")
                    break
        return func(*args, **kwargs)


def watching(fn):
    """(``fn`` run under the watch, the list it fills with "op: description" per offending op)."""
    found: list[str] = []

    def watched(*args, **kwargs):
        watch = _Watch()
        try:
            with watch:
                return fn(*args, **kwargs)
        finally:
            found.extend(f for f in watch.found if f not in found)
    return watched, found
