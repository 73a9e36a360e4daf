"""Planted-fault backends for the compiler edges drawn on purpose (``generators.edges``).

Contract: like ``fuzzcomp.planted``: every public callable is a ``torch.compile`` backend that
runs the captured graph exactly (eagerly, node by node), except for one fault that only one edge
capability reaches. The two size faults remember, per reduction of the compiled frame (its source
line), the sizes its earlier runs saw, across the frame's recompiles, as a kernel cache keyed on
the statement alone would (a frame's first compile forgets what an earlier case left):

* ``tail_remainder_bug``: a reduction over the last dim (sum, amax, mean, var, logsumexp, any,
  with an int dim) run at an odd size below its dtype's vector width, after the same graph ran it
  at or above that width, comes back wrong (the tail loop of a kernel tiled for the wide size);
* ``edge_dims_bug``: a reduction whose input dim is 1 after the same graph saw it 0, or 0 after
  it saw 1, comes back wrong (a kernel that kept the first edge size's broadcast or empty path);
* ``alias_offset_view_bug``: an output that is a view (slice, transpose, strided slice,
  unsqueeze, narrow...) of an input comes back as a fresh, wrong copy when another input it
  shares storage with, at a smaller storage offset or other strides, was written in place by the
  graph (the output view regenerated from the base without the alias's offset or strides).

``fuzzcomp.planted`` re-exports them.
"""
from __future__ import annotations

import operator

import torch

from fuzzcomp.generators.edges import VEC_WIDTH

#: reductions the two size faults watch, by FX target (call_method names and torch callables)
_REDUCE_METHODS = {"sum", "amax", "mean", "var", "logsumexp", "any", "nansum", "cumsum", "all"}
_REDUCE_FUNCS = {torch.sum, torch.amax, torch.mean, torch.var, torch.logsumexp, torch.any, torch.nansum,
                 torch.cumsum, torch.all}
_TAIL = {"sum", "amax", "mean", "var", "logsumexp", "any"}


def _name(node) -> str | None:
    if node.op == "call_method":
        return node.target
    if node.op == "call_function" and node.target in _REDUCE_FUNCS:
        return node.target.__name__
    return None


def _dim(node):
    d = node.kwargs.get("dim", node.args[1] if len(node.args) > 1 else None)
    return d if isinstance(d, int) and not isinstance(d, bool) else None


def _wrong(r):
    """A clearly wrong copy of a result: floats and integers one larger, bools flipped."""
    if not isinstance(r, torch.Tensor):
        return r
    return r.logical_not() if r.dtype == torch.bool else r + 1


#: (dynamo frame id, reduction key) -> what its earlier runs saw
_SEEN: dict = {}


def _frame_id():
    """Dynamo's id of the frame being compiled, forgetting what the id meant before when this is
    the frame's first compile (``torch._dynamo.reset`` numbers frames from 0 again); None where
    this torch does not say."""
    ctx = getattr(torch, "_guards", None)
    cid = ctx.CompileContext.current_compile_id() if ctx is not None and \
        hasattr(ctx, "CompileContext") else None
    frame = getattr(cid, "frame_id", None)
    if frame is None:
        return None
    if getattr(cid, "frame_compile_id", 0) == 0:
        for key in [k for k in _SEEN if k[0] == frame]:
            del _SEEN[key]
    return frame


def _watch(gm, names, fires) -> None:
    """Route each watched reduction's result through ``fires(state, x, dim)``: True makes it wrong."""
    g = gm.graph
    frame = _frame_id()
    for node in list(g.nodes):
        name = _name(node)
        if name not in names or _dim(node) is None or not isinstance(node.args[0], torch.fx.Node):
            continue
        trace = (node.meta.get("stack_trace") or "").strip().splitlines()
        key = (frame if frame is not None else id(gm), trace[-2:] and "\n".join(trace[-2:]) or node.name, name)
        state = _SEEN.setdefault(key, {})

        def check(r, x, dim, state=state):
            return _wrong(r) if isinstance(x, torch.Tensor) and x.dim() > 0 and fires(state, x, dim) else r
        check.__name__ = f"edge_check_{node.name}"
        with g.inserting_after(node):
            new = g.call_function(check, (node, node.args[0], _dim(node)))
        node.replace_all_uses_with(new, delete_user_cb=lambda user, new=new: user is not new)
    g.lint()
    gm.recompile()


def _tail_fires(state, x, dim) -> bool:
    if dim % x.dim() != x.dim() - 1:
        return False
    n, w = x.shape[-1], VEC_WIDTH.get(str(x.dtype).replace("torch.", ""), 16)
    if n >= w:
        state[x.dtype] = True
        return False
    return bool(n % 2 and n >= 3 and state.get(x.dtype))


def tail_remainder_bug(gm: torch.fx.GraphModule, example_inputs):
    """A last-dim reduction at an odd size below the vector width, after a wide one, is wrong."""
    _watch(gm, _TAIL, _tail_fires)
    return gm.forward


def _edge_fires(state, x, dim) -> bool:
    hit = False
    for d, n in enumerate(x.shape):
        if n in (0, 1):
            seen = state.setdefault((x.dim(), d), set())
            hit = hit or (1 - n) in seen
            seen.add(n)
    return hit


def edge_dims_bug(gm: torch.fx.GraphModule, example_inputs):
    """A reduction whose input dim is 1 after it was 0 in this graph (or 0 after 1) is wrong."""
    _watch(gm, _REDUCE_METHODS, _edge_fires)
    return gm.forward


#: FX targets that return a view of their first argument
_VIEW_METHODS = {"transpose", "t", "unsqueeze", "narrow", "select", "diagonal", "permute", "squeeze",
                 "view", "expand", "__getitem__", "swapaxes", "movedim", "unflatten", "unfold"}
_VIEW_FUNCS = {operator.getitem, torch.transpose, torch.narrow, torch.select, torch.diagonal, torch.permute,
               torch.squeeze, torch.unsqueeze, torch.swapaxes, torch.movedim}
_SETITEM = {operator.setitem}


def _first(node):
    return node.args[0] if node.args and isinstance(node.args[0], torch.fx.Node) else None


def _written_inputs(g, index) -> set[int]:
    """Placeholders a node writes in place directly (``x.neg_()``, ``x[...] = v``)."""
    out = set()
    for node in g.nodes:
        x = _first(node)
        if x is None or x.op != "placeholder":
            continue
        in_place = (node.op == "call_method" and node.target.endswith("_") and not node.target.startswith("_")) \
            or (node.op == "call_function" and (node.target in _SETITEM or
                                                getattr(node.target, "__name__", "").endswith("_")))
        if in_place:
            out.add(index[x])
    return out


def _output_views(g, index) -> dict[int, int]:
    """Output position -> the placeholder it is a view of (or is), through view ops only."""
    root = {n: index[n] for n in g.nodes if n.op == "placeholder"}
    for node in g.nodes:
        x = _first(node)
        if x in root and ((node.op == "call_method" and node.target in _VIEW_METHODS)
                          or (node.op == "call_function" and node.target in _VIEW_FUNCS)):
            root[node] = root[x]
    out_node = next(n for n in g.nodes if n.op == "output")
    flat = out_node.args[0] if isinstance(out_node.args[0], (tuple, list)) else (out_node.args[0],)
    return {k: root[n] for k, n in enumerate(flat) if isinstance(n, torch.fx.Node) and n in root}


def _offset_alias(q: torch.Tensor, p: torch.Tensor, q_later: bool) -> bool:
    """q shares p's storage as an offset view of it, or (a later argument) with other strides."""
    if q is p or q.untyped_storage().data_ptr() != p.untyped_storage().data_ptr():
        return False
    return q.storage_offset() > p.storage_offset() or \
        (q.storage_offset() == p.storage_offset() and q.stride() != p.stride() and q_later)


def alias_offset_view_bug(gm: torch.fx.GraphModule, example_inputs):
    """An output view of an input comes back a wrong copy when an input sharing its storage at a
    smaller offset or (an earlier argument) other strides is written in place by this graph."""
    g = gm.graph
    index = {n: k for k, n in enumerate(n for n in g.nodes if n.op == "placeholder")}
    written = _written_inputs(g, index)
    views = _output_views(g, index)
    if not written or not views:
        return gm.forward

    def run(*args):
        outs = gm(*args)
        single = not isinstance(outs, (tuple, list))
        flat = [outs] if single else list(outs)
        for k, q in views.items():
            a = args[q]
            if not isinstance(a, torch.Tensor) or k >= len(flat):
                continue
            if any(isinstance(args[p], torch.Tensor) and _offset_alias(a, args[p], q > p) for p in written):
                flat[k] = _wrong(flat[k])
        return flat[0] if single else type(outs)(flat)
    return run
