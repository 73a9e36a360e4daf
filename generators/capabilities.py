"""Every generator capability, with its weight and whether one case has it.

Contract: ``table(config)`` lists each capability as a ``Capability``: its name, its kind and its
weight under ``config``:

* ``reach``: a case-level capability (``reach.CAPABILITIES``); weight = the chance one case draws it;
* ``arg``: a special or out-of-domain value reaching an op argument (``reach.ARG_CAPABILITIES``,
  drawn last in the stream); weight = the chance one case draws it;
* ``setting``: a compile setting users run with (``reach.SETTINGS``, drawn last in the stream);
  weight = the chance one case draws it;
* ``knob``: registry specs scaled by a ``GenConfig`` knob (``knobs.KNOBS``); weight = the share
  of one drawn op statement that lands on its specs (knob x spec weights / all weights);
* ``form``: a sub-form drawn inside one builder (``FORMS``): weight = its share of that
  builder's draws;
* ``tail``: a form built at the end of the body (``reach.TAIL_CAPABILITIES``, the stream's last
  draws); weight = the chance one case draws it;
* ``edge``: a compiler edge drawn on purpose (``edges.EDGE_CAPABILITIES``, the stream's very last
  draws: vector-width remainders, size-0/1 dims, alias offsets); weight = the chance one case
  draws it. Its feature also counts cases the regular builders reached it in.

``has(case)`` returns the capability names one case exercises, read from its IR features
(``features.features``), never from source. Pure; nothing here runs torch.
"""
from __future__ import annotations

from dataclasses import dataclass

from .edges import EDGE_CAPABILITIES
from .features import features
from .knobs import KNOB_OF, KNOBS, weights_for
from .ir import Assign, Mutate, walk_program
from .reach import ARG_CAPABILITIES, CAPABILITIES, SETTINGS, TAIL_CAPABILITIES, weights_of
from .reach_args import FEATURE_OF as _ARG_FEATURE
from .ops_forms import MATMUL_FORMS
from .ops_resample import GUARDED_P
from .ops_scatter import LONG_SOURCE_P
from .reach_stmts import SCALAR_KIND_WEIGHTS, SCALAR_KINDS
from .structure import OFF_FULL_P
from .structure_inputs import NONLEAF_VIEW_P
from .registry import REGISTRY

#: reach capability -> feature names (or prefixes ending in "_") that show it in a case
_REACH_FEATURES = {
    "caller": ("caller_",), "special": ("special_inputs",), "constants": ("const_graph",),
    "nnlib": ("nn_",), "gstate": ("set_grad_enabled_inside", "deterministic_inside", "default_dtype_inside",
                                  "global_rebound"),
    "scalars": ("scalar_item", "scalar_tolist", "dd_"),
}
#: sub-forms drawn inside one builder: capability -> (feature, share of that builder's draws, note)
FORMS = {
    "scalar_item_out": ("scalar_item_out", SCALAR_KIND_WEIGHTS[SCALAR_KINDS.index("item_out")]
                        / sum(SCALAR_KIND_WEIGHTS), "of the scalars statements"),
    "index_reduce_long_source": ("index_reduce_long_source", LONG_SOURCE_P, "of Tensor.index_reduce"),
    "matmul_column": ("matmul_column", 1 / len(MATMUL_FORMS), "of torch.matmul[form]"),
    "interpolate_guarded_scale": ("interpolate_guarded_scale", GUARDED_P, "of interpolate scale forms"),
    "autocast_off_full": ("autocast_off_full", 0.5 * OFF_FULL_P, "of autocast regions (float32 value, top level)"),
    "nonleaf_view_write": ("nonleaf_view_write", NONLEAF_VIEW_P, "of aliased arguments (float base)"),
}


@dataclass(frozen=True)
class Capability:
    name: str
    kind: str       # reach | arg | setting | knob | form | tail | edge
    weight: float
    note: str = ""


def table(config) -> list[Capability]:
    reach_w = weights_of(config.reach_weights)
    forced = set(config.force)
    out = [Capability(n, "reach", 1.0 if n in forced else reach_w[n], "per case") for n in CAPABILITIES]
    out += [Capability(n, "arg", 1.0 if n in forced else reach_w[n], "per case") for n in ARG_CAPABILITIES]
    out += [Capability(n, "setting", 1.0 if n in forced else reach_w[n], "per case") for n in SETTINGS]
    weights = weights_for(config)
    total = sum(weights) or 1.0
    for knob in KNOBS:
        share = sum(w for op, w in zip(REGISTRY, weights) if KNOB_OF.get(op.name) == knob) / total
        out.append(Capability(knob, "knob", share, f"x{getattr(config, knob):g} per op statement"))
    out += [Capability(n, "form", w, note) for n, (_f, w, note) in FORMS.items()]
    out += [Capability(n, "tail", (1.0 if n in forced else reach_w[n]) if reach_w[n] > 0 else 0.0, "per case")
            for n in TAIL_CAPABILITIES]
    out += [Capability(n, "edge", 1.0 if n in forced else reach_w[n], "per case") for n in EDGE_CAPABILITIES]
    return out


def has(case, feats: set[str] | None = None) -> set[str]:
    """The capabilities one case exercises."""
    feats = features(case) if feats is None else feats
    out = {cap for cap, keys in _REACH_FEATURES.items()
           if any(f == k or (k.endswith("_") and f.startswith(k)) for f in feats for k in keys)}
    out |= {cap for cap, f in _ARG_FEATURE.items() if f in feats}
    out |= {cap for cap in SETTINGS if cap in feats}  # each setting's feature bears its name
    for s in walk_program(case.program):
        if isinstance(s, (Assign, Mutate)) and s.op in KNOB_OF:
            out.add(KNOB_OF[s.op])
    out |= {cap for cap, (f, _w, _n) in FORMS.items() if f in feats}
    out |= {cap for cap in TAIL_CAPABILITIES if cap in feats}  # each tail form's feature is its name
    out |= {cap for cap in EDGE_CAPABILITIES if cap in feats}  # and each edge's
    return out
