"""Per-capability weight knobs: which ``GenConfig`` field scales which registry specs.

Contract: ``KNOBS`` maps a GenConfig field name to the spec tables it scales;
``weights_for(config)`` returns the registry's draw weights under that config
(each spec's own weight times its knob and its ``op_scale`` factor, random ops
zeroed when the config turns them off). Pure and cached per (hashable, frozen) config.
"""
from __future__ import annotations

import functools

from .ops_big import BIG
from .ops_forms import FORMS
from .ops_grad import GRAD
from .ops_inplace_view import INPLACE_VIEW
from .ops_resample import RESAMPLE
from .ops_scalar import SCALAR
from .ops_scatter import SCATTER

KNOBS = {
    "forms_weight": FORMS,
    "resample_weight": RESAMPLE,
    "scalar_param_weight": SCALAR,
    "scatter_reduce_weight": SCATTER,
    "inplace_view_weight": INPLACE_VIEW,
    "grad_forms_weight": GRAD,
    "big_matmul_weight": BIG,
}
KNOB_OF = {spec.name: knob for knob, table in KNOBS.items() for spec in table}
#: ops that draw random numbers (see GenConfig.random_ops)
RANDOM_OPS = frozenset({"torch.nn.functional.dropout", "torch.rand_like", "torch.randn_like"})


@functools.lru_cache(maxsize=64)
def weights_for(config) -> tuple[float, ...]:
    from .registry import REGISTRY
    out = []
    scale = dict(config.op_scale)
    for op in REGISTRY:
        w = op.weight * getattr(config, KNOB_OF.get(op.name, ""), 1.0) * scale.get(op.name, 1.0)
        if op.name in RANDOM_OPS and not config.random_ops:
            w = 0.0
        out.append(w)
    return tuple(out)
