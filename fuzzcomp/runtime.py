"""Self-contained run helpers, shared by the worker and by every repro file.

Contract: this module imports only ``torch`` and the standard library, and its
source is pasted verbatim into repro files, so a repro builds inputs and runs
calls exactly as the campaign did. ``make_input`` is deterministic in its
arguments; ``run_call`` returns plain data (an ``Outcome`` tuple), never raises
for errors raised by the program itself.
"""
import collections
import math
import traceback

import torch

Outcome = collections.namedtuple("Outcome", "values labels error")
# values: list of detached tensors (outputs, then inputs after the call)
# error:  None, or (exception type name, one-line message, last frames)


def _base_values(shape, dtype, seed, perturb, draw):
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dtype)
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=g).to(dt)
    if dt.is_floating_point:
        t = (torch.rand(shape, generator=g, dtype=torch.float64) * 4 - 2).to(dt)
        if perturb:
            g2 = torch.Generator().manual_seed(seed * 1_000_003 + draw + 1)
            noise = torch.rand(shape, generator=g2, dtype=torch.float64) * 2 - 1
            eps = torch.finfo(dt).eps
            t = (t.double() * (1 + perturb * eps * noise)).to(dt)
        return t
    lo = 0 if dtype == "uint8" else -8
    return torch.randint(lo, 9, shape, generator=g).to(dt)


def make_input(shape, dtype, layout="contiguous", seed=0, device="cpu", upcast=False, perturb=0.0,
               draw=0):
    """A tensor of ``shape``/``dtype`` with seeded values and the given memory layout.

    upcast: float tensors become float64 holding the same values (the fp64 reference).
    perturb: relative noise of ``perturb`` machine epsilons on float values (``draw`` picks the noise).
    """
    shape = tuple(shape)
    base_shape = list(shape)
    if layout == "transposed":
        base_shape[-1], base_shape[-2] = base_shape[-2], base_shape[-1]
    elif layout == "sliced":
        base_shape[-1] = base_shape[-1] * 2
    elif layout == "expanded":
        base_shape[0] = 1
    elif layout == "offset":
        base_shape = [math.prod(shape) + 3]
    base = _base_values(tuple(base_shape), dtype, seed, perturb, draw)
    if upcast and base.dtype.is_floating_point:
        base = base.to(torch.float64)
    base = base.to(device)
    if layout == "transposed":
        return base.transpose(-1, -2)
    if layout == "sliced":
        return base[..., ::2]
    if layout == "expanded":
        return base.expand(shape)
    if layout == "offset":
        return base[3:].view(shape)
    if layout == "channels_last":
        return base.contiguous(memory_format=torch.channels_last)
    return base


def make_inputs(specs, sizes, seed, device="cpu", upcast=False, perturb=0.0, draw=0):
    """specs: [(name, shape with symbol names or ints, dtype, layout)], sizes: {symbol: int}."""
    out = []
    for i, (_name, shape, dtype, layout) in enumerate(specs):
        concrete = [sizes[d] if isinstance(d, str) else d for d in shape]
        out.append(make_input(concrete, dtype, layout, seed * 31 + i, device, upcast, perturb, draw))
    return out


def _flatten(obj, prefix, values, labels):
    if isinstance(obj, torch.Tensor):
        values.append(obj.detach().clone())
        labels.append(prefix)
    elif isinstance(obj, (list, tuple)):
        for i, x in enumerate(obj):
            _flatten(x, f"{prefix}[{i}]", values, labels)
    elif isinstance(obj, dict):
        for k in sorted(obj, key=str):
            _flatten(obj[k], f"{prefix}[{k!r}]", values, labels)
    else:
        values.append(obj)
        labels.append(prefix)


def run_call(fn, inputs, names, rng_seed=0):
    """Call ``fn(*inputs)`` with the RNG reset; return outputs and the inputs after the call."""
    torch.manual_seed(rng_seed)
    try:
        result = fn(*inputs)
    except Exception as e:  # the program's own failure is data, not a harness error
        frames = traceback.extract_tb(e.__traceback__)[-3:]
        where = " <- ".join(f"{f.name}" for f in reversed(frames))
        msg = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
        return Outcome([], [], (type(e).__name__, msg, where))
    values, labels = [], []
    _flatten(result, "output", values, labels)
    for name, x in zip(names, inputs):
        _flatten(x, f"input {name} after call", values, labels)
    return Outcome(values, labels, None)
