"""Planted-fault backends for special and out-of-domain op arguments and the newer argument forms.

Contract: like ``fuzzcomp.planted``: every public callable is a ``torch.compile`` backend that
runs the captured graph exactly, except for one fault that only one generator capability
reaches: an infinite remainder/fmod divisor, NaN or -inf reaching softmax, a float16/bfloat16
remainder/fmod by a Python float the dtype cannot represent, an ``.item()`` returned as an
output, an ``index_reduce`` source longer than its target dim, a ``(..., k, 1)`` matmul column
of a second value, an interpolate scale guarded by the generator (nearest at a non-integer
scale, or a non-dyadic one). ``fuzzcomp.planted`` re-exports them.
"""
from __future__ import annotations

import math

import torch

from fuzzcomp.planted.forms import _perturb_where, _val

F = torch.nn.functional
_REMAINDERS = {torch.remainder: torch.floor, torch.fmod: torch.trunc}


def _infinite(d) -> bool:
    """A divisor that is +-inf: a Python float, or a tensor filled with one by ``full_like``."""
    if isinstance(d, float):
        return math.isinf(d)
    if isinstance(d, torch.fx.Node) and d.op == "call_function" and d.target is torch.full_like:
        fill = d.args[1] if len(d.args) > 1 else d.kwargs.get("fill_value")
        return isinstance(fill, float) and math.isinf(fill)
    return False


def inf_divisor_bug(gm: torch.fx.GraphModule, example_inputs):
    """remainder/fmod by an infinite divisor are computed by the textbook formula
    ``a - d * floor(a / d)`` (``trunc`` for fmod): inf * 0 makes NaN where eager keeps ``a``
    (or gives the divisor's infinity)."""
    g = gm.graph
    for node in list(g.nodes):
        if node.op != "call_function" or node.target not in _REMAINDERS or len(node.args) < 2:
            continue
        a, d = node.args[:2]
        if not _infinite(d):
            continue
        with g.inserting_before(node):  # in order: each new node before the one it replaces
            q = g.call_function(_REMAINDERS[node.target], (g.call_function(torch.div, (a, d)),))
            new = g.call_function(torch.sub, (a, g.call_function(torch.mul, (q, d))))
        node.replace_all_uses_with(new)
        g.erase_node(node)
    g.lint()
    gm.recompile()
    return gm.forward


_SOFTMAX = {torch.softmax, torch.log_softmax, F.softmax, F.log_softmax, "softmax", "log_softmax"}


def softmax_special_bug(gm: torch.fx.GraphModule, example_inputs):
    """softmax/log_softmax read their input through ``nan_to_num``: NaN becomes 0 and -inf the
    lowest finite value, so rows of NaN or -inf come back finite (eager: NaN)."""
    g = gm.graph
    for node in list(g.nodes):
        if node.op in ("call_function", "call_method") and node.target in _SOFTMAX and node.args:
            x = node.args[0]
            if not isinstance(x, torch.fx.Node):
                continue
            with g.inserting_before(node):
                clean = g.call_function(torch.nan_to_num, (x,), {"nan": 0.0})
            node.replace_input_with(x, clean)
    g.lint()
    gm.recompile()
    return gm.forward


_HALF = (torch.float16, torch.bfloat16)


def _half_divisor(node) -> bool:
    if node.op != "call_function" or node.target not in _REMAINDERS or len(node.args) < 2:
        return False
    a, d = _val(node.args[0]), node.args[1]
    if not (isinstance(a, torch.Tensor) and a.dtype in _HALF and isinstance(d, float) and math.isfinite(d)):
        return False
    return torch.tensor(d, dtype=a.dtype).item() != d


def half_divisor_bug(gm: torch.fx.GraphModule, example_inputs):
    """remainder/fmod of a float16/bfloat16 tensor by a Python float that dtype cannot represent
    take one quotient too few: results come back one divisor too large."""
    g = gm.graph
    for node in list(g.nodes):
        if _half_divisor(node):
            with g.inserting_after(node):
                new = g.call_function(torch.add, (node, node.args[1]))
            node.replace_all_uses_with(new, delete_user_cb=lambda user: user is not new)
    g.lint()
    gm.recompile()
    return gm.forward


def item_output_bug(gm: torch.fx.GraphModule, example_inputs):
    """A Python number the graph returns straight from ``.item()`` (captured under
    capture_scalar_outputs) comes back off by one."""
    out = next(n for n in gm.graph.nodes if n.op == "output")
    flat = out.args[0] if isinstance(out.args[0], (tuple, list)) else (out.args[0],)
    hit = {i for i, n in enumerate(flat)
           if isinstance(n, torch.fx.Node) and n.op == "call_method" and n.target == "item"}
    if not hit:
        return gm.forward

    def bump(o):
        return o if isinstance(o, (bool, torch.Tensor)) or not isinstance(o, (int, float, torch.SymInt,
                                                                                torch.SymFloat)) else o + 1

    def run(*args):
        outs = gm(*args)
        if not isinstance(outs, (tuple, list)):
            return bump(outs) if 0 in hit else outs
        return type(outs)(bump(o) if i in hit else o for i, o in enumerate(outs))
    return run


def _long_source(node) -> bool:
    if node.op != "call_method" or node.target != "index_reduce" or len(node.args) < 4:
        return False
    self_v, dim, src = _val(node.args[0]), node.args[1], _val(node.args[3])
    return isinstance(self_v, torch.Tensor) and isinstance(src, torch.Tensor) and isinstance(dim, int) \
        and src.dim() == self_v.dim() and src.shape[dim] > self_v.shape[dim]


#: index_reduce whose source is longer along the indexed dim than the target: results 0.1% off
index_reduce_long_bug = _perturb_where(_long_source)


def _column(node) -> bool:
    if node.target not in (torch.matmul, "matmul") or len(node.args) < 2:
        return False
    a, b = node.args[:2]
    return isinstance(b, torch.fx.Node) and b.op == "call_method" and b.target == "unsqueeze" \
        and tuple(b.args[1:]) == (-1,) and b.args[0] is not a


#: matmul of a value by another value's unsqueeze(-1) column: results 0.1% off
matmul_column_bug = _perturb_where(_column)


def _guarded_scale(node) -> bool:
    if node.target is not F.interpolate:
        return False
    sf = node.kwargs.get("scale_factor", node.args[2] if len(node.args) > 2 else None)
    sfs = [f for f in (sf if isinstance(sf, (tuple, list)) else (sf,)) if isinstance(f, float)]
    nearest = str(node.kwargs.get("mode", "nearest")).startswith("nearest")
    return any(f != int(f) and (nearest or f * 1024 != int(f * 1024)) for f in sfs)


#: interpolate in a nearest mode at a non-integer scale, or at a non-dyadic scale (1.3): 0.1% off
guarded_scale_bug = _perturb_where(_guarded_scale)
