"""Planted-fault backends for the generator's argument forms and op capabilities.

Contract: like ``fuzzcomp.planted``: every public callable is a ``torch.compile``
backend that runs the captured graph exactly, except for one fault that only
one generator capability can reach (a non-default pooling form, a broadcast or
1-D matmul, a widening dtype view, ``out=`` into reductions, inputs aliasing at
an offset, a non-integer interpolate scale, a Python-float op parameter that
changes between calls, ``include_self=False`` scatter/index reductions, an
in-place view op, an in-place update of a non-leaf grad tensor, a kinked loss,
a big GEMM/conv). They prove that the generator reaches each capability and
that the oracles see it. ``fuzzcomp.planted`` re-exports them.
"""
from __future__ import annotations


import torch

F = torch.nn.functional


def _val(n):
    return n.meta.get("example_value") if isinstance(n, torch.fx.Node) else None


def _bump_after(gm, node, in_place: bool = False) -> None:
    """Float results x1.001, integer results +1; in place for nodes that write their self/out."""
    val = _val(node)
    if not isinstance(val, torch.Tensor) or val.dtype == torch.bool:
        return
    is_float = val.dtype.is_floating_point
    with gm.graph.inserting_after(node):
        if in_place:
            gm.graph.call_method("mul_" if is_float else "add_", (node, 1.001 if is_float else 1))
            return
        bumped = gm.graph.call_function(torch.mul if is_float else torch.add, (node, 1.001 if is_float else 1))
    node.replace_all_uses_with(bumped, delete_user_cb=lambda user: user is not bumped)


def _perturb_where(pred, in_place=lambda node: False):
    def backend(gm: torch.fx.GraphModule, example_inputs):
        for node in list(gm.graph.nodes):
            if node.op in ("call_function", "call_method") and pred(node):
                _bump_after(gm, node, in_place(node))
        gm.graph.lint()
        gm.recompile()
        return gm.forward
    return backend


def _arg(node, i, name, default=None):
    if name in node.kwargs:
        return node.kwargs[name]
    return node.args[i] if len(node.args) > i else default


_POOLS = {F.max_pool1d, F.max_pool2d, F.avg_pool1d, F.avg_pool2d}


def _pool_form(node) -> bool:
    if node.target not in _POOLS:
        return False
    k = _arg(node, 1, "kernel_size")
    stride = _arg(node, 2, "stride")
    default_stride = stride in (None, k, (), [])
    return bool(_arg(node, 5 if "max" in node.target.__name__ else 4, "ceil_mode", False)) or \
        _arg(node, 3, "padding", 0) not in (0, (0,), (0, 0)) or not default_stride or \
        ("max" in node.target.__name__ and _arg(node, 4, "dilation", 1) not in (1, (1,), (1, 1)))


#: max/avg pooling with a non-default stride, padding, dilation or ceil_mode comes back 0.1% off
pool_form_bug = _perturb_where(_pool_form)


def _mm_form(node) -> bool:
    if node.target not in (torch.matmul, torch.bmm, "matmul", "bmm"):
        return False
    vals = [_val(a) for a in node.args[:2]]
    if not all(isinstance(v, torch.Tensor) for v in vals):
        return False
    return vals[0].dim() != vals[1].dim() or min(v.dim() for v in vals) == 1 or \
        any(0 in v.stride() and v.numel() > 1 for v in vals)


#: matmul with broadcast batch dims or a 1-D operand, bmm of an expanded operand: 0.1% off
matmul_form_bug = _perturb_where(_mm_form)


def _widen(node) -> bool:
    if node.op != "call_method" or node.target != "view" or len(node.args) != 2:
        return False
    src, dt = _val(node.args[0]), node.args[1]
    return isinstance(src, torch.Tensor) and isinstance(dt, torch.dtype) and dt.itemsize > src.dtype.itemsize


#: a dtype view that widens (e.g. int8 storage read as int16) comes back off by one
dtype_widen_bug = _perturb_where(_widen)


def out_reduction_bug(gm: torch.fx.GraphModule, example_inputs):
    """Reductions and multi-output ops with ``out=`` write 0.1% off (or +1) into their out tensors."""
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and "out" in node.kwargs and getattr(node.target, "__name__", "") in (
                "sum", "mean", "amax", "amin", "prod", "aminmax", "sort"):
            outs = node.kwargs["out"]
            for o in (outs if isinstance(outs, (tuple, list)) else (outs,)):
                if isinstance(o, torch.fx.Node):
                    with gm.graph.inserting_after(node):
                        v = _val(o)
                        if isinstance(v, torch.Tensor) and v.dtype.is_floating_point:
                            gm.graph.call_method("mul_", (o, 1.001))
    gm.graph.lint()
    gm.recompile()
    return gm.forward


def alias_offset_bug(gm: torch.fx.GraphModule, example_inputs):
    """Float outputs come back 0.1% off whenever two inputs share storage at different offsets."""
    def run(*args):
        outs = gm(*args)
        ts = [a for a in args if isinstance(a, torch.Tensor) and a.numel()]
        hit = any(a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
                  and a.storage_offset() != b.storage_offset() for i, a in enumerate(ts) for b in ts[i + 1:])
        if not hit:
            return outs
        return type(outs)(o * 1.001 if isinstance(o, torch.Tensor) and o.dtype.is_floating_point else o
                          for o in outs)
    return run


def _nonint_scale(node) -> bool:
    if node.target is not F.interpolate:
        return False
    sf = node.kwargs.get("scale_factor", node.args[2] if len(node.args) > 2 else None)
    sfs = sf if isinstance(sf, (tuple, list)) else (sf,)
    return any(isinstance(f, float) and f != int(f) for f in sfs)


#: interpolate with a non-integer scale factor comes back 0.1% off
interpolate_scale_bug = _perturb_where(_nonint_scale)

_PARAM_OPS = {torch.clamp, torch.remainder, torch.fmod, torch.div, F.huber_loss, F.margin_ranking_loss,
              F.hinge_embedding_loss}


def stale_scalar_param(gm: torch.fx.GraphModule, example_inputs):
    """Python-float arguments that reach clamp/remainder/fmod/div/loss calls are frozen at the
    value of the graph's first call. Dynamo passes a float that changed between calls as a 0-d
    float64 tensor read with ``.item()``; this backend keeps the first one it was given."""
    if not any(n.op == "call_function" and n.target in _PARAM_OPS for n in gm.graph.nodes):
        return gm.forward
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    frozen_at = [i for i, n in enumerate(places)
                 if any(u.op == "call_method" and u.target == "item" for u in n.users)]
    if not frozen_at:
        return gm.forward
    first: dict[int, object] = {}

    def run(*args):
        args = list(args)
        for i in frozen_at:
            if i < len(args):
                args[i] = first.setdefault(i, args[i])
        return gm(*args)
    return run


def _no_self(node) -> bool:
    return node.op == "call_method" and node.target in ("scatter_reduce", "scatter_reduce_", "index_reduce") \
        and node.kwargs.get("include_self", True) is False


#: scatter_reduce / index_reduce with include_self=False come back 0.1% off
scatter_no_self_bug = _perturb_where(_no_self, in_place=lambda n: n.target.endswith("_"))

_INPLACE_VIEWS = {"unsqueeze_", "squeeze_", "transpose_", "t_", "as_strided_", "resize_"}


def inplace_view_bug(gm: torch.fx.GraphModule, example_inputs):
    """A graph holding an in-place view op returns its float outputs 0.1% off."""
    if not any(n.op == "call_method" and n.target in _INPLACE_VIEWS for n in gm.graph.nodes):
        return gm.forward

    def run(*args):
        outs = gm(*args)
        return type(outs)(o * 1.001 if isinstance(o, torch.Tensor) and o.dtype.is_floating_point else o
                          for o in outs)
    return run


def _nonleaf_grad_write(node) -> bool:
    if node.op != "call_method" or node.target not in ("add_", "sub_", "mul_", "div_", "relu_", "sigmoid_",
                                                          "tanh_"):
        return False
    self_node = node.args[0]
    v = _val(self_node)
    return isinstance(v, torch.Tensor) and v.requires_grad and self_node.op != "placeholder"


def nonleaf_grad_bug(gm: torch.fx.GraphModule, example_inputs):
    """AOTAutograd with an exact forward; gradients come back 0.1% off when the graph updates a
    non-leaf tensor that requires grad in place."""
    if not any(_nonleaf_grad_write(n) for n in gm.graph.nodes):
        return gm.forward
    return wrong_gradient(gm, example_inputs)


_LOSSES = {F.huber_loss, F.margin_ranking_loss, F.hinge_embedding_loss, F.kl_div}
#: huber, margin ranking, hinge embedding and kl_div losses come back 0.1% off
loss_kink_bug = _perturb_where(lambda n: n.target in _LOSSES)


def _big(node) -> bool:
    if node.target not in (torch.mm, torch.addmm, torch.bmm, F.conv2d):
        return False
    if node.target is F.conv2d:  # channels in and out
        w = _val(node.args[1])
        return isinstance(w, torch.Tensor) and min(w.shape[:2]) >= 64
    return any(isinstance(_val(a), torch.Tensor) and _val(a).dim() >= 2 and min(_val(a).shape[-2:]) >= 64
               for a in node.args[:3])


#: mm/addmm/bmm/conv2d with operands of 64 and more in both trailing dims come back 0.1% off
big_matmul_bug = _perturb_where(_big)


def _scaled_backward(scale: float):
    def bw_compiler(gm: torch.fx.GraphModule, example_inputs):
        def run(args):
            outs = torch.fx.Interpreter(gm).boxed_run(args)
            return [o * scale if isinstance(o, torch.Tensor) and o.dtype.is_floating_point else o
                    for o in outs]
        run._boxed_call = True
        return run
    return bw_compiler


def wrong_gradient(gm: torch.fx.GraphModule, example_inputs):
    """AOTAutograd with an exact forward; every float gradient comes back 0.1% too large."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._dynamo.backends.debugging import boxed_nop
    return aot_autograd(fw_compiler=boxed_nop, bw_compiler=_scaled_backward(1.001))(gm, example_inputs)
