"""The layout rule: which base tensor an input of a given memory layout is a view of.

Contract: ``base_shape(shape, layout, times=...)`` is the shape of the base tensor whose view in
``layout`` has ``shape`` (transposed: the last two dims swapped; sliced: the last doubled, viewed
with step 2; expanded: the first dim 1, expanded; offset: a flat storage 3 longer, viewed from
element 3; channels_last and contiguous: the shape itself). ``times(a, b)`` multiplies two dims:
ints by default, or the renderer's texts of symbolic sizes. ``view_of(base, shape, layout)`` is
that view of a base tensor. The executor's ``fuzzcomp.run.runtime.make_input`` applies the same
rule in its own words, because it is pasted into repro files and imports only torch;
``tests/test_layout.py`` holds the two to the same shapes, strides and offsets.
"""
from __future__ import annotations

LAYOUTS = ("contiguous", "transposed", "sliced", "offset", "expanded", "channels_last")


def _mul(a, b):
    return a * b


def base_shape(shape, layout: str, times=_mul) -> list:
    out = list(shape)
    if layout == "transposed":
        out[-1], out[-2] = out[-2], out[-1]
    elif layout == "sliced":
        out[-1] = times(2, out[-1])
    elif layout == "expanded":
        out[0] = 1
    elif layout == "offset":
        n = 1
        for d in shape:
            n = times(n, d)
        out = [n + 3 if isinstance(n, int) else f"{n} + 3"]
    elif layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}")
    return out


def view_of(base, shape, layout: str):
    """The view in ``layout`` of a base tensor of ``base_shape(shape, layout)``."""
    if layout == "transposed":
        return base.transpose(-1, -2)
    if layout == "sliced":
        return base[..., ::2]
    if layout == "expanded":
        return base.expand(tuple(shape))
    if layout == "offset":
        return base[3:].view(tuple(shape))
    if layout == "channels_last":
        import torch  # lazily: the rule itself needs no torch; only this one view names its memory format
        return base.contiguous(memory_format=torch.channels_last)
    return base
