"""Planted faults: custom torch.compile backends, each breaking one thing, that prove each oracle
can fail. Users address them as ``--backend fuzzcomp.planted:NAME``, so every backend is named here.
"""
from fuzzcomp.planted.faults import (
    abort, alias_offset_bug, big_matmul_bug, break_aliasing, crash_on_symbolic,
    drop_grad_mode_change, drop_mutation_noncontiguous, dtype_widen_bug, flip_negative_zero,
    forget_graphs, hang, hang_at_run, ignore_caller_autocast, inductor_relu_bug,
    inplace_view_bug, interpolate_scale_bug, loss_kink_bug, matmul_form_bug,
    miscompute_after_item, nonleaf_grad_bug, out_reduction_bug, perturb_add,
    perturb_library_kernels, perturb_mul, pool_form_bug, runtime_crash, scatter_no_self_bug,
    stale_result, stale_scalar_param, wrong_gradient,)
from fuzzcomp.planted.arguments import (
    guarded_scale_bug, half_divisor_bug, index_reduce_long_bug, inf_divisor_bug, item_output_bug,
    matmul_column_bug, softmax_special_bug,)
from fuzzcomp.planted.edges import alias_offset_view_bug, edge_dims_bug, tail_remainder_bug
from fuzzcomp.planted.tail import nested_region_bug, out_topk_max_norm_bug, widen_view_out_bug
from fuzzcomp.planted.recompiles import always_recompile_bug, inference_recompile_bug, inplace_recompile_bug
from fuzzcomp.planted.saved import saved_alias_bug
from fuzzcomp.planted.cache import stale_cache_bug
from fuzzcomp.planted.regions import autocast_off_bug, rebased_view_grad_bug

__all__ = [
    "abort", "alias_offset_bug", "big_matmul_bug", "break_aliasing", "crash_on_symbolic",
    "drop_grad_mode_change", "drop_mutation_noncontiguous", "dtype_widen_bug",
    "flip_negative_zero", "forget_graphs", "hang", "hang_at_run", "ignore_caller_autocast",
    "inductor_relu_bug", "inplace_view_bug", "interpolate_scale_bug", "loss_kink_bug",
    "matmul_form_bug", "miscompute_after_item", "nonleaf_grad_bug", "out_reduction_bug",
    "perturb_add", "perturb_library_kernels", "perturb_mul", "pool_form_bug", "runtime_crash",
    "scatter_no_self_bug", "stale_result", "stale_scalar_param", "wrong_gradient",
    "guarded_scale_bug", "half_divisor_bug", "index_reduce_long_bug", "inf_divisor_bug", "item_output_bug",
    "matmul_column_bug", "softmax_special_bug", "saved_alias_bug",
    "nested_region_bug", "out_topk_max_norm_bug", "widen_view_out_bug",
    "always_recompile_bug", "inference_recompile_bug", "inplace_recompile_bug", "stale_cache_bug",
    "autocast_off_bug", "rebased_view_grad_bug",
    "tail_remainder_bug", "edge_dims_bug", "alias_offset_view_bug",
]
