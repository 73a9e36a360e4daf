"""The perturbed runs' view of a normalisation: its mean moved by a few roundings.

Contract: ``NormJitter(seed, draw, perturb)`` is a torch function mode for the perturbed eager
runs (``fuzzcomp.run.execute.add_perturbed``): every ``layer_norm``, ``group_norm``,
``instance_norm`` and training-mode ``batch_norm`` it sees returns its own result plus the change
that moving each row's mean by ``perturb`` relative epsilons of the type it is computed in (float32
for half inputs; seeded noise, one draw per row) makes, through the row's ``1/sqrt(var + eps)`` and the weight. It changes
nothing else, and nothing at all outside the perturbed runs.

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


class NormJitter(TorchFunctionMode):
    def __init__(self, seed: int, draw: int, perturb: float):
        super().__init__()
        self.gen = torch.Generator().manual_seed(seed * 7_368_787 + draw * 101 + 3)
        self.perturb = perturb

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
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

    def _shift(self, x, dims, eps):
        xd = x.double()
        mean = xd.mean(dims, keepdim=True)
        var = xd.var(dims, unbiased=False, keepdim=True)
        noise = (torch.rand(mean.shape, generator=self.gen, dtype=torch.float64) * 2 - 1).to(x.device)
        # half inputs are normalised in float32 (eager and Inductor alike): the mean's rounding is float32's
        acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
        moved = mean * (self.perturb * torch.finfo(acc).eps) * noise
        return -moved * torch.rsqrt(var + eps)
