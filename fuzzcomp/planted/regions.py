"""Planted-fault backends for a nested ``autocast(enabled=False)`` region and for a non-leaf view
argument written in place.

Contract: like ``fuzzcomp.planted``: every public callable is a ``torch.compile`` backend that
runs the captured graph exactly, except for one fault that only one generator capability
reaches. ``autocast_off_bug`` runs the ops of an ``autocast(enabled=False)`` region nested in an
enabled one under the outer bfloat16 autocast anyway (what the region switched off is switched
back on); ``rebased_view_grad_bug`` writes into a graph argument that is a non-leaf view
requiring grad (an activation's view handed on) without recording the write for autograd, so
the view keeps its old history and its base's gradient loses the path through the write.
``fuzzcomp.planted`` re-exports them.
"""
from __future__ import annotations

import operator

import torch


def _is_enter(node) -> bool:
    return node.op == "call_function" and getattr(node.target, "__name__", "") == "_enter_autocast"


def _is_exit(node) -> bool:
    return node.op == "call_function" and getattr(node.target, "__name__", "") == "_exit_autocast"


def _round_bf16_after(gm, node) -> None:
    """Every use of ``node``'s float32 result reads it rounded through bfloat16 (dtype kept)."""
    with gm.graph.inserting_after(node):
        low = gm.graph.call_method("to", (node, torch.bfloat16))
    with gm.graph.inserting_after(low):
        back = gm.graph.call_method("to", (low, torch.float32))
    node.replace_all_uses_with(back, delete_user_cb=lambda user: user not in (low, back))


def autocast_off_bug(gm: torch.fx.GraphModule, example_inputs):
    """The ops of a region entered with ``enabled=False`` inside an enabled autocast region
    compute in bfloat16 anyway: their float32 results come back rounded to bfloat16 (as float32,
    so only the values show it)."""
    stack: list[bool] = []   # per open region: entered enabled
    hit = []
    for node in gm.graph.nodes:
        if _is_enter(node):
            stack.append(bool((list(node.args) + [None, None, None])[2]))
        elif _is_exit(node) and stack:
            stack.pop()
        elif len(stack) >= 2 and not stack[-1] and any(stack) and node.op in ("call_function", "call_method"):
            val = node.meta.get("example_value")
            if isinstance(val, torch.Tensor) and val.dtype == torch.float32:
                hit.append(node)
    for node in hit:
        _round_bf16_after(gm, node)
    if hit:
        gm.graph.lint()
        gm.recompile()
    return gm.forward


def _written_in_place(gm: torch.fx.GraphModule) -> set[int]:
    """Positions of the placeholders the graph writes in place directly (``x.mul_(...)``,
    ``x[...] = ...``)."""
    out = set()
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for k, p in enumerate(places):
        for user in p.users:
            if not user.args or user.args[0] is not p:
                continue
            if user.op == "call_method" and user.target.endswith("_") and not user.target.startswith("__"):
                out.add(k)
            elif user.op == "call_function" and user.target is operator.setitem:
                out.add(k)
    return out


def _nonleaf_view(x) -> bool:
    return isinstance(x, torch.Tensor) and x.requires_grad and not x.is_leaf and x._is_view()


def rebased_view_grad_bug(gm: torch.fx.GraphModule, example_inputs):
    """A graph argument that is a non-leaf view requiring grad and that the graph writes in place
    is given to the graph as a detached copy, and the result is copied back under no_grad: its
    values are right, its history is the view's old one (no CopySlices), and every gradient
    through it is as if the write and the reads after it never happened."""
    written = _written_in_place(gm)
    if not written:
        return gm.forward

    def run(*args):
        hit = [k for k in written if k < len(args) and _nonleaf_view(args[k])]
        if not hit:
            return gm(*args)
        args = list(args)
        orig = {k: args[k] for k in hit}
        for k in hit:
            args[k] = args[k].detach().clone()
        outs = gm(*args)
        with torch.no_grad():
            for k in hit:
                orig[k].copy_(args[k])
        return outs
    return run
