"""Planted-fault backends for the recompile oracle: guards that fail where Dynamo's would not.

Contract: like ``fuzzcomp.planted``: every public callable is a ``torch.compile`` backend that
runs the captured graph exactly, and adds one wrong guard while Dynamo still collects the
frame's guards: an identity guard (``ID_MATCH``) on a graph input. Every call passes fresh
tensors, so a frame holding such a guard compiles again on every call, and a call already seen
compiles again on replay. Which inputs get it is the fault: inputs created under inference mode
(``inference_recompile_bug``), inputs the graph writes in place (``inplace_recompile_bug``), or
every tensor input (``always_recompile_bug``). ``fuzzcomp.planted`` re-exports them.
"""
from __future__ import annotations

import torch


def _id_guard(node) -> None:
    from torch._dynamo.guards import GuardBuilder, install_guard
    install_guard(node.meta["grapharg"].source.make_guard(GuardBuilder.ID_MATCH))


def _tensor_inputs(gm: torch.fx.GraphModule):
    """(placeholder, the real tensor Dynamo holds for it) for each tensor graph input."""
    for node in gm.graph.nodes:
        arg = node.meta.get("grapharg") if node.op == "placeholder" else None
        example = getattr(arg, "example", None) if arg is not None else None
        if isinstance(example, torch.Tensor) and getattr(arg, "source", None) is not None:
            yield node, example


_VIEWS = {"view", "view_as", "reshape", "transpose", "t", "permute", "unsqueeze", "squeeze", "select",
          "narrow", "expand", "expand_as", "diagonal", "getitem", "as_strided", "unfold", "movedim",
          "flatten", "unflatten", "swapaxes", "detach", "split", "chunk", "unbind"}


def _name(node) -> str:
    return getattr(node.target, "__name__", str(node.target))


def _base(node):
    """The graph input a value is a view of (None when it is a new tensor)."""
    while node.op in ("call_method", "call_function") and _name(node) in _VIEWS and node.args \
            and isinstance(node.args[0], torch.fx.Node):
        node = node.args[0]
    return node if node.op == "placeholder" else None


def _written(gm: torch.fx.GraphModule) -> set:
    """Placeholders some in-place call (``x.add_(y)``, ``torch.add(..., out=x)``) writes."""
    out = set()
    for node in gm.graph.nodes:
        name = _name(node)
        if node.op in ("call_method", "call_function") and name.endswith("_") and not name.endswith("__") \
                and node.args and isinstance(node.args[0], torch.fx.Node):
            out.add(_base(node.args[0]))
        dest = node.kwargs.get("out") if node.op == "call_function" else None
        if isinstance(dest, torch.fx.Node):
            out.add(_base(dest))
    return out - {None}


def inference_recompile_bug(gm: torch.fx.GraphModule, example_inputs):
    """An identity guard on each input created under inference mode: every call with inference
    tensors compiles again."""
    for node, example in _tensor_inputs(gm):
        if example.is_inference():
            _id_guard(node)
    return gm.forward


def inplace_recompile_bug(gm: torch.fx.GraphModule, example_inputs):
    """An identity guard on each input the graph writes in place."""
    written = _written(gm)
    for node, _ in _tensor_inputs(gm):
        if node in written:
            _id_guard(node)
    return gm.forward


def always_recompile_bug(gm: torch.fx.GraphModule, example_inputs):
    """An identity guard on every tensor input: every call compiles again."""
    for node, _ in _tensor_inputs(gm):
        _id_guard(node)
    return gm.forward
