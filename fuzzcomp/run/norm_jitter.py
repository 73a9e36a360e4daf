"""The perturbed runs' view of a normalisation: its mean moved by a few roundings.

Contract: ``NormJitter(seed, draw, perturb, floor)`` is a torch function mode for the perturbed eager
runs (``fuzzcomp.run.execute.add_perturbed``): every ``layer_norm``, ``group_norm``,
``instance_norm`` and training-mode ``batch_norm`` it sees returns its own result plus the change
that moving each row's mean by ``perturb`` relative epsilons of the type it is computed in (float32
for half inputs; seeded noise, one draw per row) makes, through the row's ``1/sqrt(var + eps)`` and the weight. It changes
nothing else, and nothing at all outside the perturbed runs.

``floor`` is the perturbed inputs' epsilon floor (``runtime.perturb_floor``: bfloat16 steps under
autocast), so a mean moves at least as far as the inputs do.

The same mode gives every ``std`` (and ``std_mean``) the std of its rows with their mean moved by
``perturb`` relative epsilons: over equal values the spread is 0 and the std's gradient undefined
(eager gives 0, compiled code whose mean is one rounding off gives ``sign(x - mean) / sqrt(n (n - 1))``
on every element of the row); over values of real spread the move is a few roundings.

Why: a row of one element, or of equal values (broadcast copies included), has variance 0, so
its normalised value is ``(x - mean) / sqrt(eps)``: exactly 0 in eager and in the fp64 run, one
rounding of the mean times ``1/sqrt(eps)`` (316 for eps=1e-5) in compiled code that computes the
mean another way. Perturbing the inputs cannot show that (a one-element row stays exact), so the
fp64 rule would blame the compiler for an ill-conditioned computation. With the mean moved by a
few roundings the perturbed run lands as far from fp64 as compiled does there; on a row of real
variance the move is a few roundings of the output, far below any real fault.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode


def _arg(args, kwargs, i, name, default=None):
    return args[i] if len(args) > i else kwargs.get(name, default)


def _layout(func, args, kwargs):
    """(x viewed with the reduced elements in one trailing dim, reduce dims, weight shaped to
    broadcast against x, eps), or None for a call that is no mean-subtracting normalisation."""
    if not args or not isinstance(args[0], torch.Tensor) or not args[0].dtype.is_floating_point:
        return None
    x = args[0]
    if func is F.layer_norm:
        ns = tuple(_arg(args, kwargs, 1, "normalized_shape"))
        k = len(ns)
        w = _arg(args, kwargs, 2, "weight")
        return x, tuple(range(x.dim() - k, x.dim())), w, float(_arg(args, kwargs, 4, "eps", 1e-5))
    if x.dim() < 2:
        return None
    shape_c = (1, x.shape[1]) + (1,) * (x.dim() - 2)
    if func is F.group_norm:
        g = int(_arg(args, kwargs, 1, "num_groups"))
        w = _arg(args, kwargs, 2, "weight")
        return ("group", g), None, (w.reshape(shape_c) if w is not None else None), \
            float(_arg(args, kwargs, 4, "eps", 1e-5))
    if func is F.batch_norm:
        if not _arg(args, kwargs, 5, "training", False):
            return None  # eval mode divides by the running variance: no row statistics
        w = _arg(args, kwargs, 3, "weight")
        dims = (0,) + tuple(range(2, x.dim()))
        return x, dims, (w.reshape(shape_c) if w is not None else None), float(_arg(args, kwargs, 7, "eps", 1e-5))
    if func is F.instance_norm:
        if not _arg(args, kwargs, 5, "use_input_stats", True):
            return None
        w = _arg(args, kwargs, 3, "weight")
        return x, tuple(range(2, x.dim())), (w.reshape(shape_c) if w is not None else None), \
            float(_arg(args, kwargs, 7, "eps", 1e-5))
    return None


#: std's gradient at zero spread is undefined: its backward divides by the std, which eager
#: computes exactly 0 over equal values (and then gives gradient 0), compiled code one rounding off
#: (then the gradient is sign(x - mean) / sqrt(n (n - 1)), of order 1 and one sign per row)
_SPREADS = (torch.std, torch.std_mean, torch.Tensor.std)


def _std_shape(args, kwargs):
    """(x, reduced dims, correction, keepdim) of a std call, None for a form not modelled."""
    if not args or not isinstance(args[0], torch.Tensor) or not args[0].dtype.is_floating_point:
        return None
    x, rest = args[0], list(args[1:])
    dim, keepdim = kwargs.get("dim"), kwargs.get("keepdim", False)
    correction, unbiased = kwargs.get("correction"), kwargs.get("unbiased")
    if rest and isinstance(rest[0], bool):  # std(x, unbiased)
        unbiased = rest.pop(0)
    elif rest:
        dim = rest.pop(0)
    if rest and isinstance(rest[0], bool) and unbiased is None:  # std(x, dim, unbiased, keepdim)
        unbiased = rest.pop(0)
    if rest:
        keepdim = rest.pop(0)
    if rest or not isinstance(keepdim, bool):
        return None
    if correction is None:
        correction = 0 if unbiased is False else 1
    if dim is None:
        dims = tuple(range(x.dim()))
    elif isinstance(dim, int):
        dims = (dim % max(1, x.dim()),)
    elif isinstance(dim, (tuple, list)) and all(isinstance(d, int) for d in dim):
        dims = tuple(sorted({d % max(1, x.dim()) for d in dim}))
    else:
        return None
    return x, dims, float(correction), keepdim


class NormJitter(TorchFunctionMode):
    def __init__(self, seed: int, draw: int, perturb: float, floor: float = 0.0):
        super().__init__()
        self.gen = torch.Generator().manual_seed(seed * 7_368_787 + draw * 101 + 3)
        self.perturb, self.floor = perturb, floor

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func in _SPREADS:
            return self._off_mean_std(out, args, kwargs)
        if func not in (F.layer_norm, F.group_norm, F.batch_norm, F.instance_norm) \
                or not isinstance(out, torch.Tensor):
            return out
        lay = _layout(func, args, kwargs)
        if lay is None:
            return out
        x, dims, w, eps = lay
        if isinstance(x, tuple):  # group_norm: rows are (sample, group)
            g, x = x[1], args[0]
            xr = x.reshape(x.shape[0], g, -1)
            shift = self._shift(xr, (2,), eps).expand(xr.shape).reshape(x.shape)
        else:
            shift = self._shift(x, dims, eps)
        if w is not None:
            shift = shift * w
        return out + shift.to(out.dtype)

    def _off_mean_std(self, out, args, kwargs):
        """``std``'s result as it is with the row's mean moved by ``perturb`` relative epsilons:
        ``sqrt(std**2 + (n d**2 - 2 d S) / (n - c))`` with ``d`` the move and ``S`` the row's sum of
        ``x - mean`` (value 0, gradient 1 per element). Over equal values that is the ``|d|``-sized
        std and the ``-sign(d) / sqrt(n (n - c))`` gradient of compiled code whose mean is off;
        over values of real spread it moves the std and its gradient by a few roundings."""
        std = out[0] if isinstance(out, tuple) else out
        shape = _std_shape(args, kwargs)
        if shape is None or not isinstance(std, torch.Tensor) or not std.dtype.is_floating_point:
            return out
        x, dims, c, keepdim = shape
        n = 1
        for d in dims:
            n *= x.shape[d]
        if n - c <= 0 or x.numel() == 0:
            return out
        mean = x.detach().double().mean(dims, keepdim=True)
        total = (x.double() - mean).sum(dims, keepdim=keepdim)
        total = total - total.detach()  # value 0: only its gradient counts
        if not keepdim:
            mean = mean.sum(dims)  # one element per row: drops the reduced dims
        move = self._move(mean, x)
        var = std.double() ** 2 + (n * move * move - 2 * move * total) / (n - c)
        moved = var.detach() > 0
        safe = torch.sqrt(torch.where(moved, var, torch.ones_like(var)))
        new = torch.where(moved, safe, std.double()).to(std.dtype)
        return (new,) + tuple(out[1:]) if isinstance(out, tuple) else new

    def _shift(self, x, dims, eps):
        xd = x.double()
        mean = xd.mean(dims, keepdim=True)
        var = xd.var(dims, unbiased=False, keepdim=True)
        return -self._move(mean, x) * torch.rsqrt(var + eps)

    def _move(self, mean, x):
        """How far each row's ``mean`` moves: ``perturb`` relative epsilons of the type ``x`` is
        reduced in, at least the inputs' floor (seeded noise in [-1, 1], one draw per row). Half
        inputs are reduced in float32 (eager and Inductor alike): the mean's rounding is float32's."""
        noise = (torch.rand(mean.shape, generator=self.gen, dtype=torch.float64) * 2 - 1).to(x.device)
        acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
        return mean * (self.perturb * max(torch.finfo(acc).eps, self.floor)) * noise
