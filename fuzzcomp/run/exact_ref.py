"""Exact float64 stand-ins for eager kernels that are only float32-accurate in float64.

Contract: the fp64 reference run is the fp64 rule's witness. For a float64 program it is eager
itself, so an eager kernel that holds a float32 constant makes a correct compiled value look
wrong (hardsigmoid's ``1.0f / 6.0f``: CUDA forward and backward, CPU backward; compiled, which
decomposes it, is exact). ``imprecise(device)`` probes each op of ``SUSPECTS`` once per device
and process: eager's float64 forward and backward on a probe tensor against the op's composite
of correctly rounded float64 steps, and returns the ops whose kernel is off by more than float64
rounding. ``exact_reference(device)`` is a context manager under which those ops, called on
float64 tensors, run as their composite. Only the fp64 reference run uses it, so eager and the
compiled runs are untouched; where torch's kernel is exact nothing is swapped, and a kernel
fixed in a later torch drops out of the list by itself. A creation op is probed and swapped
the same way (``CREATION``): eager's float64 ``linspace`` fuses a multiply-add, so the grid
point the arithmetic puts at zero comes out as 2.8e-17; a weight built from it then turns an
``inf`` input into ``inf`` where the exact zero (and compiled's decomposition) gives ``nan``
(CPU 1509's ``F.linear`` finding: eager's rounding at a discontinuity, not a compiler bug).
"""
from __future__ import annotations

import contextlib
import functools

import torch
from torch.overrides import TorchFunctionMode

F = torch.nn.functional
#: the probe: a float64 kernel whose forward or backward is off its composite by more than this
#: (relative to 1; the probed values are O(1)) holds a constant coarser than float64
PROBE_TOL = 1e-13


def _hardsigmoid(x):
    # eager's boundaries: slope 1/6 strictly inside (-3, 3), 0 below, 1 above (and their gradients)
    # (NaN stays NaN with no gradient, as eager's)
    inside = (x > -3) & (x < 3)
    rest = torch.where(x >= 3, torch.ones_like(x), torch.where(x.isnan(), x.detach(), torch.zeros_like(x)))
    return torch.where(inside, (x + 3) / 6, rest)


def _hardswish(x):
    # eager's boundaries: x (x + 3) / 6 strictly inside (-3, 3) (gradient x / 3 + 1/2 there); at or
    # below -3, x * 0 (a -0.0, gradient 0); otherwise (3 and above, NaN) x itself (gradient 1)
    mid = (x > -3) & (x < 3)
    m = torch.where(mid, x, torch.zeros_like(x))  # no inf * 0 in the unused branch's gradient
    return torch.where(mid, m * (m + 3) / 6, torch.where(x <= -3, x.detach() * 0, x))


#: op name -> (the functions that reach the kernel, the composite)
SUSPECTS = {
    "hardsigmoid": ((F.hardsigmoid, torch._C._nn.hardsigmoid), _hardsigmoid),
    "hardswish": ((F.hardswish, torch._C._nn.hardswish), _hardswish),
}
_FUNCS = {f: name for name, (funcs, _c) in SUSPECTS.items() for f in funcs}


def _linspace(start, end, steps, **kw):
    """``linspace`` as torch's reference does it, one rounding per step (no fused multiply-add):
    from the start for the first half, from the end for the second, so a symmetric grid's middle
    point is exactly zero."""
    i = torch.arange(steps, dtype=torch.float64, device=kw.get("device"))
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    return torch.where(i < steps / 2, start + step * i, end - step * (steps - 1 - i))


#: creation ops: name -> (the function, its composite on Python-number arguments)
CREATION = {"linspace": (torch.linspace, _linspace)}
_CREATORS = {f: name for name, (f, _c) in CREATION.items()}
_GRIDS = ((-0.5, 0.5, 7), (-1.0, 1.0, 63), (-0.5, 0.5, 35), (-1.0, 1.0, 5))


def _probe_creation(name: str, device: str) -> bool:
    func, composite = CREATION[name]
    return any(not torch.equal(func(a, b, n, dtype=torch.float64, device=device),
                               composite(a, b, n, dtype=torch.float64, device=device)) for a, b, n in _GRIDS)


def _probe(name: str, device: str) -> bool:
    funcs, composite = SUSPECTS[name]
    x = torch.linspace(-2.9, 2.9, 59, dtype=torch.float64, device=device)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    ea, eb = funcs[0](a), composite(b)
    ea.sum().backward()
    eb.sum().backward()
    return bool(((ea - eb).abs().max() > PROBE_TOL) or ((a.grad - b.grad).abs().max() > PROBE_TOL))


@functools.lru_cache(maxsize=None)
def imprecise(device: str) -> frozenset[str]:
    """The ops of ``SUSPECTS`` whose eager float64 kernel on ``device`` is not float64-accurate."""
    out = set()
    for name in list(SUSPECTS) + list(CREATION):
        try:
            if (_probe(name, device) if name in SUSPECTS else _probe_creation(name, device)):
                out.add(name)
        except Exception:  # an op or device torch lacks here: nothing to stand in for
            pass
    return frozenset(out)


class _StandIn(TorchFunctionMode):
    def __init__(self, names):
        super().__init__()
        self.names = names

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        made = _CREATORS.get(func)
        if made in self.names and kwargs.get("dtype") == torch.float64 and set(kwargs) <= {"dtype", "device"} \
                and len(args) == 3 and all(isinstance(a, (int, float)) for a in args):
            return CREATION[made][1](*args, **kwargs)
        name = _FUNCS.get(func)
        x = args[0] if args else kwargs.get("input")
        if name in self.names and isinstance(x, torch.Tensor) and x.dtype == torch.float64:
            out = SUSPECTS[name][1](x)
            if kwargs.get("inplace") or (len(args) > 1 and args[1] is True):
                return x.copy_(out)
            return out
        return func(*args, **kwargs)


def exact_reference(device) -> contextlib.AbstractContextManager:
    """Run the fp64 reference with the float32-accurate float64 kernels of ``device`` swapped
    for their exact composites (a no-op context where there are none)."""
    names = imprecise(str(torch.device(device)))
    return _StandIn(names) if names else contextlib.nullcontext()
