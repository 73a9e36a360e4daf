"""Planted-fault backends: torch.compile backends with one known bug each.

Contract: every public callable here is a valid ``torch.compile`` backend
(``backend(gm, example_inputs) -> callable``) that behaves exactly like eager
execution of the captured graph except for its one documented fault. They
prove each oracle can fail (``--backend fuzzcomp.planted:perturb_add``) and are
never used by default.
"""
from __future__ import annotations

import operator
import os
import time

import torch


def _is_float_node(node) -> bool:
    val = node.meta.get("example_value")
    return isinstance(val, torch.Tensor) and val.dtype.is_floating_point


def perturb_results(targets, scale: float):
    """A backend whose floating results of the ``targets`` ops come back times ``scale`` (the
    graph is otherwise run as captured); tests plant their own faults with it too."""
    def backend(gm: torch.fx.GraphModule, example_inputs):
        for node in list(gm.graph.nodes):
            if node.op in ("call_function", "call_method") and node.target in targets \
                    and _is_float_node(node):
                with gm.graph.inserting_after(node):
                    bumped = gm.graph.call_function(torch.mul, (node, scale))
                node.replace_all_uses_with(bumped, delete_user_cb=lambda user: user is not bumped)
        gm.graph.lint()
        gm.recompile()
        return gm.forward
    return backend


#: Floating results of ``torch.add``/``+`` come back 0.1% too large.
perturb_add = perturb_results({torch.add, operator.add, operator.iadd, "add"}, 1.001)
#: Floating results of ``torch.mul``/``*`` come back 0.1% too large.
perturb_mul = perturb_results({torch.mul, operator.mul, "mul"}, 1.001)


def drop_mutation_noncontiguous(gm: torch.fx.GraphModule, example_inputs):
    """In-place updates of non-contiguous inputs are lost (the graph runs on copies)."""
    def run(*args):
        args = [a.clone() if isinstance(a, torch.Tensor) and not a.is_contiguous() else a for a in args]
        return gm(*args)
    return run


def stale_result(gm: torch.fx.GraphModule, example_inputs):
    """From the second call on, returns the first call's outputs again (a stale cache)."""
    cache = {}

    def run(*args):
        if "out" not in cache:
            cache["out"] = gm(*args)
            return cache["out"]
        fresh = gm(*args)
        old = cache["out"]
        same_shapes = all(not isinstance(a, torch.Tensor) or a.shape == b.shape
                          for a, b in zip(old, fresh))
        return old if same_shapes else fresh
    return run


def crash_on_symbolic(gm: torch.fx.GraphModule, example_inputs):
    """Refuses to compile any graph whose inputs have symbolic sizes."""
    for x in example_inputs:
        if isinstance(x, torch.SymInt) or (isinstance(x, torch.Tensor) and
                                           any(isinstance(s, torch.SymInt) for s in x.shape)):
            raise NotImplementedError("planted fault: symbolic sizes are not supported")
    return gm.forward


def runtime_crash(gm: torch.fx.GraphModule, example_inputs):
    """Compiles fine; the compiled code raises on its second call."""
    calls = [0]

    def run(*args):
        calls[0] += 1
        if calls[0] >= 2:
            raise RuntimeError("planted fault: compiled kernel failed at run time")
        return gm(*args)
    return run


def hang(gm: torch.fx.GraphModule, example_inputs):
    """Never finishes compiling."""
    while True:
        time.sleep(3600)


def hang_at_run(gm: torch.fx.GraphModule, example_inputs):
    """Compiles at once; the compiled code never returns (a kernel stuck in a loop)."""
    def run(*args):
        while True:
            time.sleep(3600)
    return run


def abort(gm: torch.fx.GraphModule, example_inputs):
    """Kills the process during compilation, as a segfaulting codegen would."""
    os.abort()


def inductor_relu_bug(gm: torch.fx.GraphModule, example_inputs):
    """Real Inductor with its own test-only fault switched on: relu miscompiled."""
    import torch._inductor.config as cfg
    from torch._inductor.compile_fx import compile_fx
    # the switch moved from the top level to cpp./triton. across versions: patch what exists
    names = [n for n in ("inject_relu_bug_TESTING_ONLY", "cpp.inject_relu_bug_TESTING_ONLY",
                         "triton.inject_relu_bug_TESTING_ONLY") if _has_config(cfg, n)]
    with cfg.patch({n: "accuracy" for n in names}):
        return compile_fx(gm, example_inputs)


def _has_config(cfg, dotted: str) -> bool:
    obj = cfg
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def break_aliasing(gm: torch.fx.GraphModule, example_inputs):
    """Outputs come back as fresh copies: an output that should alias an input no longer does."""
    def run(*args):
        outs = gm(*args)
        return type(outs)(o.clone() if isinstance(o, torch.Tensor) else o for o in outs)
    return run


def forget_graphs(gm: torch.fx.GraphModule, example_inputs):
    """Every compiled graph drops Dynamo's caches after it runs: each call compiles again."""
    def run(*args):
        out = gm(*args)
        torch._dynamo.reset()
        return out
    return run


# ---- faults only the reach capabilities can trigger ------------------------------------------
def ignore_caller_autocast(gm: torch.fx.GraphModule, example_inputs):
    """Runs the graph with the caller's autocast switched off (autocast regions inside the
    program are nodes of the graph and still apply): outputs keep float32 where eager's are bf16."""
    def run(*args):
        with torch.autocast("cpu", enabled=False):
            return gm(*args)
    return run


def flip_negative_zero(gm: torch.fx.GraphModule, example_inputs):
    """Float outputs holding -0.0 come back with +0.0 there (other outputs are untouched)."""
    def fix(o):
        if isinstance(o, torch.Tensor) and o.dtype.is_floating_point:
            neg0 = (o == 0) & o.signbit()
            if bool(neg0.any()):
                return torch.where(neg0, torch.zeros_like(o), o)
        return o

    def run(*args):
        outs = gm(*args)
        return type(outs)(fix(o) for o in outs) if isinstance(outs, (tuple, list)) else fix(outs)
    return run


def _library_targets():
    import torch.nn.functional as F
    names = [(torch, "_transformer_encoder_layer_fwd"), (torch, "_native_multi_head_attention"),
             (F, "multi_head_attention_forward"), (F, "batch_norm"), (F, "instance_norm"),
             (F, "embedding_bag"), (torch, "batch_norm"), (torch, "embedding_bag")]
    return {getattr(m, n) for m, n in names if hasattr(m, n)}


def perturb_library_kernels(gm: torch.fx.GraphModule, example_inputs):
    """The first float result of torch.nn library kernels (the transformer fast path, attention,
    batch/instance norm with running stats, embedding_bag) comes back 0.1% too large."""
    targets = _library_targets()
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in targets:
            continue
        val = node.meta.get("example_value")
        if isinstance(val, (tuple, list)):  # multi-output kernels: bump the first getitem user
            users = [u for u in node.users if u.target is operator.getitem and u.args[1] == 0]
            if not users or not _is_float_node(users[0]):
                continue
            node = users[0]
        elif not _is_float_node(node):
            continue
        with gm.graph.inserting_after(node):
            bumped = gm.graph.call_function(torch.mul, (node, 1.001))
        node.replace_all_uses_with(bumped, delete_user_cb=lambda user: user is not bumped)
    gm.graph.lint()
    gm.recompile()
    return gm.forward


def drop_grad_mode_change(gm: torch.fx.GraphModule, example_inputs):
    """Grad-mode switches recorded inside the graph are dropped: what the program computes after
    ``torch.set_grad_enabled(False)`` still records autograd history."""
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target is torch._C._set_grad_enabled:
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm.forward


def miscompute_after_item(gm: torch.fx.GraphModule, example_inputs):
    """Graphs that read a scalar out of a tensor (``.item()``, captured with
    capture_scalar_outputs) or make a data-dependent shape (nonzero, masked_select, unique,
    captured with capture_dynamic_output_shape_ops) return float outputs 0.1% too large and
    integer outputs off by one."""
    dd = {torch.nonzero, torch.masked_select, torch.unique}
    hit = any(n.op == "call_method" and n.target in ("item", "tolist", "nonzero")
              or n.op == "call_function" and n.target in dd for n in gm.graph.nodes)
    if not hit:
        return gm.forward

    def bump(o):
        if isinstance(o, torch.Tensor) and not o.dtype.is_complex and o.dtype != torch.bool:
            return o * 1.001 if o.dtype.is_floating_point else o + 1
        return o

    def run(*args):
        outs = gm(*args)
        return type(outs)(bump(o) for o in outs) if isinstance(outs, (tuple, list)) else bump(outs)
    return run
# faults that only one generator capability reaches (argument forms, resampling, scalars...)
from fuzzcomp.planted.forms import (alias_offset_bug, big_matmul_bug, dtype_widen_bug, inplace_view_bug,  # noqa: E402,F401
                            interpolate_scale_bug, loss_kink_bug, matmul_form_bug, nonleaf_grad_bug,
                            out_reduction_bug, pool_form_bug, scatter_no_self_bug, stale_scalar_param, wrong_gradient)
