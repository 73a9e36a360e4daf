"""Planted-fault backends for the generator's tail forms (``generators.tail_forms``).

Contract: like ``fuzzcomp.planted``: every public callable is a ``torch.compile`` backend that
runs the captured graph exactly, except for one fault that only one tail form reaches: ``out=``
on topk, max/min or linalg.norm writing wrong values into its out tensors, a widened dtype view
returned as an output read from a source whose lowest bit is flipped, and the second call of a
``nested_compile_region`` returning the first call's results. ``fuzzcomp.planted`` re-exports them.
"""
from __future__ import annotations

import torch

from fuzzcomp.planted.forms import _val

_OUT_TARGETS = {torch.topk, torch.max, torch.min, torch.linalg.norm}


def out_topk_max_norm_bug(gm: torch.fx.GraphModule, example_inputs):
    """topk, max/min (dim forms) and linalg.norm called with ``out=`` write their float results
    0.1% off and their indices one too large into the out tensors."""
    g = gm.graph
    for node in list(g.nodes):
        if node.op != "call_function" or node.target not in _OUT_TARGETS or "out" not in node.kwargs:
            continue
        outs = node.kwargs["out"]
        for o in (outs if isinstance(outs, (tuple, list)) else (outs,)):
            v = _val(o)
            if isinstance(v, torch.Tensor) and v.dtype != torch.bool:
                with g.inserting_after(node):
                    g.call_method("mul_" if v.dtype.is_floating_point else "add_",
                                  (o, 1.001 if v.dtype.is_floating_point else 1))
    g.lint()
    gm.recompile()
    return gm.forward


def _returned_widen(node) -> bool:
    """A dtype view to a wider element type whose result the graph returns as it is."""
    if node.op != "call_method" or node.target != "view" or len(node.args) != 2:
        return False
    src, dt = _val(node.args[0]), node.args[1]
    return isinstance(src, torch.Tensor) and isinstance(dt, torch.dtype) and \
        dt.itemsize > src.dtype.itemsize and any(u.op == "output" for u in node.users)


_SAME_WIDTH_INT = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def widen_view_out_bug(gm: torch.fx.GraphModule, example_inputs):
    """A widened dtype view the graph returns reads a copy of its source with the lowest bit of
    every element flipped (one unit in the last place of a half value)."""
    g = gm.graph
    for node in list(g.nodes):
        if not _returned_widen(node):
            continue
        src = node.args[0]
        dt = _val(src).dtype
        with g.inserting_before(node):
            bits = g.call_method("view", (src, _SAME_WIDTH_INT[dt.itemsize]))
            flipped = g.call_function(torch.bitwise_xor, (bits, 1))
            back = g.call_method("view", (flipped, dt))
        node.replace_input_with(src, back)
    g.lint()
    gm.recompile()
    return gm.forward


def nested_region_bug(gm: torch.fx.GraphModule, example_inputs):
    """A ``nested_compile_region`` called again returns the results of its first call in this
    graph (a region cache keyed on the code alone, not the arguments); the graph then runs under
    aot_eager, which differentiates it correctly."""
    from torch._dynamo.backends.debugging import aot_eager
    hop = getattr(torch.ops.higher_order, "invoke_subgraph", None)  # absent before nested regions
    g = gm.graph
    first: dict = {}
    for node in list(g.nodes):
        if hop is None or node.op != "call_function" or node.target is not hop or len(node.args) < 2:
            continue
        key = node.args[1]
        if key not in first:
            first[key] = node
            continue
        earlier = {u.args[1]: u for u in first[key].users
                   if u.op == "call_function" and len(u.args) == 2 and isinstance(u.args[1], int)}
        for u in list(node.users):
            if u.op == "call_function" and len(u.args) == 2 and u.args[1] in earlier:
                u.replace_all_uses_with(earlier[u.args[1]])
    g.lint()
    gm.recompile()
    return aot_eager(gm, example_inputs)
