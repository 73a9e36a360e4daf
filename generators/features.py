"""Which structural features a Case uses, read from the IR (never from source text).

Contract: ``features(case)`` returns the set of feature names present in one
case; ``FEATURES`` lists every name it can return. Used by tests (every
feature appears over N seeds) and by histogram reports.
"""
from __future__ import annotations

from .edges import EDGE_CAPABILITIES, edge_features
from .reach import REACH_FEATURES, reach_features
from .features_ops import OP_FEATURES, op_features
from .ir import (Assign, CallFn, Case, CondOp, DataCond, If, Loop, Mutate, Return, ScalarCond, SizeCond,
                 While, With, submodules, walk, walk_program)

FEATURES = (
    "if_size", "if_data_any", "if_data_item", "if_scalar", "torch_cond", "for_range", "for_range_scalar",
    "for_tuple", "for_container", "while_size", "early_return", "helper_call", "closure_global_tensor",
    "closure_global_int", "closure_global_float", "module", "module_params", "module_frozen_param",
    "module_buffer_update", "submodule", "scalar_int_arg", "scalar_float_arg", "autocast",
    "autocast_nested_off", "input_list", "input_tuple", "input_dict", "output_list", "output_dict",
    "output_single", "aliased_args", "sizes_change", "values_change", "dynamic_true", "dynamic_false",
    "dynamic_none", "mark_dynamic", "maybe_mark_dynamic", "scalar_values_change", "global_values_change",
    "no_grad_call", "inference_mode_call", "inference_inputs", "requires_grad", "requires_grad_flip",
    "nested_region",
    "autocast_off_full", "nonleaf_view_write",
) + REACH_FEATURES + OP_FEATURES + tuple(EDGE_CAPABILITIES)


def features(case: Case) -> set[str]:
    p, calls = case.program, case.calls
    f: set[str] = set()
    for s in walk_program(p):
        if isinstance(s, If):
            c = s.cond
            if isinstance(c, SizeCond):
                f.add("if_size")
            elif isinstance(c, DataCond):
                f.add(f"if_data_{c.kind}")
            elif isinstance(c, ScalarCond):
                f.add("if_scalar")
            if any(isinstance(x, Return) for x in s.then + s.orelse):
                f.add("early_return")
        elif isinstance(s, CondOp):
            f.add("torch_cond")
        elif isinstance(s, Loop):
            if s.kind == "range":
                f.add("for_range_scalar" if isinstance(s.count, str) else "for_range")
            else:
                f.add("for_tuple" if s.kind == "tuple" else "for_container")
        elif isinstance(s, While):
            f.add("while_size")
        elif isinstance(s, With):
            f.add("autocast" if s.kind == "autocast" else "autocast_nested_off")
            if s.kind == "no_autocast" and any(isinstance(x, Assign) and x.op == "autocast:off_full"
                                               for x in s.body):
                f.add("autocast_off_full")  # full precision again, from full-precision values
        elif isinstance(s, CallFn) and not s.fn.startswith("self."):
            f.add("helper_call")
        elif isinstance(s, CallFn):
            f.add("submodule")
        elif isinstance(s, Mutate) and s.target.startswith("self.buf"):
            f.add("module_buffer_update")
    nested = {h.name for h in p.helpers if h.nested}
    if nested and sum(isinstance(s, CallFn) and s.fn in nested for s in walk_program(p)) >= 2:
        f.add("nested_region")  # a nested_compile_region helper called twice or more
    used = set()
    for s in walk(p.body):
        if isinstance(s, (Assign, Mutate, CallFn)):
            used |= {a.name for a in s.args if hasattr(a, "name")}
        if isinstance(s, If) and isinstance(s.cond, ScalarCond):
            used.add(s.cond.name)
        if isinstance(s, Loop) and isinstance(s.count, str):
            used.add(s.count)
        if isinstance(s, (If, CondOp)) and isinstance(getattr(s, "cond", getattr(s, "pred", None)), DataCond):
            used.add((s.cond if isinstance(s, If) else s.pred).var)
    for g in p.globals:
        if g.name in used:
            f.add(f"closure_global_{g.kind}")
    if p.module is not None:
        f.add("module")
        if any(st.kind == "param" for st in p.module.state):
            f.add("module_params")
        if any(st.kind == "param" and not st.requires_grad for m in [p.module, *submodules(p)] for st in m.state):
            f.add("module_frozen_param")
    for i in p.inputs:
        if i.kind in ("int", "float") and i.name in used:
            f.add(f"scalar_{i.kind}_arg")
        elif i.kind in ("list", "tuple", "dict"):
            f.add(f"input_{i.kind}")
        elif i.kind == "alias":
            f.add("aliased_args")
    if p.out_kind != "tuple":
        f.add(f"output_{p.out_kind}")
    f.add({True: "dynamic_true", False: "dynamic_false", None: "dynamic_none"}[case.compile.dynamic])
    if len({c.sizes for c in calls}) > 1:
        f.add("sizes_change")
    if len(calls) > 1 and len({c.sizes for c in calls}) < len(calls):
        f.add("values_change")  # the same shapes called again with new values
    for c in calls:
        for _n, _d, how in c.marks:
            f.add("maybe_mark_dynamic" if how == "maybe" else "mark_dynamic")
        if c.grad_mode == "no_grad":
            f.add("no_grad_call")
        elif c.grad_mode == "inference":
            f.add("inference_mode_call")
        if c.inference_inputs:
            f.add("inference_inputs")
        if c.requires_grad:
            f.add("requires_grad")
    if _nonleaf_view_written(case):
        f.add("nonleaf_view_write")
    if len({c.scalars for c in calls}) > 1:
        f.add("scalar_values_change")
    if len({c.globals for c in calls}) > 1:
        f.add("global_values_change")
    if len({c.requires_grad for c in calls}) > 1:
        f.add("requires_grad_flip")
    return f | reach_features(case) | op_features(case) | edge_features(case)


def _nonleaf_view_written(case: Case) -> bool:
    """An argument taken as a view of a non-leaf copy of its base is written in place while
    the base requires grad (some call): autograd rebases the view's history."""
    p = case.program
    views = {i.name: i.alias_of for i in p.inputs if i.kind == "alias" and i.view.startswith("nonleaf:")}
    written = {s.target for s in walk(p.body) if isinstance(s, Mutate)} & set(views)
    grads = set()
    for c in case.calls:
        grads |= set(c.requires_grad if c.requires_grad is not None else
                     (i.name for i in p.inputs if i.requires_grad))
    return any(views[v] in grads for v in written)
