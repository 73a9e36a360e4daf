"""Planted fault for the caller's writes after a call: a backward reading written values.

Contract: like ``fuzzcomp.planted``: ``saved_alias_bug`` is a ``torch.compile`` backend that runs
the captured graph exactly, except that every tensor the graph saves for backward is kept as a
``detach()``-ed alias (through ``saved_tensors_hooks``), which shares the tensor's storage but
escapes autograd's version check. A tensor written after it was saved (the caller writing an
input under no_grad between forward and backward, or writing an output in place) then feeds
backward its written values silently, where eager raises. A program that overwrote a saved
tensor itself is one eager rejects, so only the caller's writes reach the fault.
"""
from __future__ import annotations

import torch


def _alias(t: torch.Tensor) -> torch.Tensor:
    return t.detach()


def _same(t: torch.Tensor) -> torch.Tensor:
    return t


def saved_alias_bug(gm: torch.fx.GraphModule, example_inputs):
    """Saved tensors become detached aliases: backward reads whatever they hold by then."""
    def run(*args):
        with torch.autograd.graph.saved_tensors_hooks(_alias, _same):
            return gm(*args)
    return run
