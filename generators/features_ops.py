"""Op-level capability features: which argument forms and op capabilities a Case uses.

Contract: ``op_features(case)`` returns the set of names (from ``OP_FEATURES``)
that one case exercises, read from the IR (statement op names and templates,
inputs, the call schedule), never from emitted source. ``features.features``
and ``stats.histogram`` include them, so ``fuzzcomp stats`` shows the share of
programs having each one.
"""
from __future__ import annotations

from .ir import Assign, Case, Mutate, walk_program
from .tail_forms import OUT_OPS, WIDEN_OP

OP_FEATURES = (
    "pool_form", "pool_ceil_mode", "matmul_1d", "matmul_broadcast", "dtype_view_widen", "out_reduction",
    "out_multi", "aliased_args_offset", "interpolate", "interpolate_nonint_scale", "interpolate_size",
    "interpolate_align_corners", "scalar_param", "scalar_param_varies", "half_literal", "scatter_reduce_amax_amin",
    "scatter_reduce_prod_mean", "scatter_reduce_no_self", "index_reduce", "inplace_view", "nonleaf_inplace_grad",
    "loss_kink", "big_matmul", "matmul_column", "index_reduce_long_source", "interpolate_guarded_scale",
    "out_topk_max_norm", "widen_view_out",
)
_NONINT = ("0.75", "1.25", "1.5", "1.75", "2.5", "1.3", "0.7")
_NONDYADIC = ("1.3", "0.7")


def _stmt_features(op: str, tmpl: str) -> set[str]:
    f: set[str] = set()
    base, _, variant = op.partition("[")
    if variant == "form]" and "pool" in base:
        f.add("pool_form")
        if "ceil_mode=True" in tmpl:
            f.add("pool_ceil_mode")
    elif op in ("torch.matmul[form]", "torch.bmm[expand]"):
        if "{1}" in tmpl and tmpl.endswith(".unsqueeze(-1))"):
            f.add("matmul_column")
        else:
            f.add("matmul_1d" if "reshape(-1)" in tmpl else "matmul_broadcast")
    elif op == "Tensor.view[widen]":
        f.add("dtype_view_widen")
    elif op == WIDEN_OP:
        f.add("widen_view_out")
    elif op in OUT_OPS:
        f.add("out_topk_max_norm")
    elif variant == "out]":
        f.add("out_multi" if base in ("torch.aminmax", "torch.sort") else "out_reduction")
    elif base == "torch.nn.functional.interpolate":
        f.add("interpolate")
        if "size=" in tmpl:
            f.add("interpolate_size")
        scales = tmpl.split("scale_factor=")[1].split(")")[0] if "scale_factor=" in tmpl else ""
        if any(s in scales for s in _NONINT):
            f.add("interpolate_nonint_scale")
        # what only GUARDED scales give: a non-dyadic scale, or a nearest mode at a non-integer one
        if any(s in scales for s in _NONDYADIC) or "mode='nearest" in tmpl and any(s in scales for s in _NONINT):
            f.add("interpolate_guarded_scale")
        if "align_corners=" in tmpl:
            f.add("interpolate_align_corners")
    elif variant == "scalar]" and base in ("torch.clamp", "torch.div", "torch.remainder", "torch.fmod"):
        f.add("scalar_param")
    elif variant == "half_literal]":
        f.add("half_literal")
    elif base in ("Tensor.scatter_reduce", "Tensor.scatter_reduce_", "Tensor.index_reduce"):
        f.add("scatter_reduce_amax_amin" if ("'amax'" in tmpl or "'amin'" in tmpl) else "scatter_reduce_prod_mean")
        if "include_self=False" in tmpl:
            f.add("scatter_reduce_no_self")
        if base == "Tensor.index_reduce":
            f.add("index_reduce")
            if "torch.cat(" in tmpl:
                f.add("index_reduce_long_source")
    elif base in ("Tensor.unsqueeze_", "Tensor.squeeze_", "Tensor.transpose_", "Tensor.t_", "Tensor.as_strided_",
                  "Tensor.resize_"):
        f.add("inplace_view")
    elif variant == "nonleaf]" and not base.startswith("input:"):  # not the write of a non-leaf view input
        f.add("nonleaf_inplace_grad")
    elif base in ("torch.nn.functional.huber_loss", "torch.nn.functional.margin_ranking_loss",
                  "torch.nn.functional.hinge_embedding_loss", "torch.nn.functional.kl_div"):
        f.add("loss_kink")
    elif variant == "big]":
        f.add("big_matmul")
    return f


def op_features(case: Case) -> set[str]:
    p = case.program
    f: set[str] = set()
    scalar_names = {i.name for i in p.inputs if i.kind == "float"} | {g.name for g in p.globals if g.kind == "float"}
    for s in walk_program(p):
        if isinstance(s, (Assign, Mutate)):
            f |= _stmt_features(s.op, s.template)
            # a loss whose margin/delta is a Python-float argument (named in its template)
            if s.op.endswith("_loss") and any(f"={n}" in s.template or f"({n})" in s.template for n in scalar_names):
                f.add("scalar_param")
    if any(i.kind == "alias" and i.view == "offset" for i in p.inputs):
        f.add("aliased_args_offset")
    if "scalar_param" in f:
        vals = [{dict(c.scalars + c.globals).get(n) for c in case.calls} for n in scalar_names]
        if any(len(v) > 1 for v in vals):
            f.add("scalar_param_varies")
    return f
