"""A planted fault in the FX-graph cache's load path, for warm-cache cases.

Contract: ``stale_cache_bug`` is a ``torch.compile`` backend that compiles exactly as Inductor
does (``compile_fx``), except that a graph the FX-graph cache serves from disk comes back
perturbed: each floating output of the loaded graph is 0.1% too large, as if the cache had
served a graph compiled with a perturbed op. A cold compile (a cache miss) and a run with the
caches off are exact, so only a second process served from a warm cache shows the fault.
``fuzzcomp.planted`` re-exports it.
"""
from __future__ import annotations

import functools

import torch

_SCALE = 1.001


def _perturbed(compiled_graph):
    run = getattr(compiled_graph, "current_callable", None)
    if run is None or getattr(run, "_fuzzcomp_perturbed", False):
        return compiled_graph

    @functools.wraps(run)
    def perturbed(*args, **kwargs):
        out = run(*args, **kwargs)
        seq = isinstance(out, (list, tuple))
        outs = [o * _SCALE if isinstance(o, torch.Tensor) and o.dtype.is_floating_point and not o._is_view()
                else o for o in (out if seq else [out])]
        return type(out)(outs) if seq else outs[0]

    perturbed._fuzzcomp_perturbed = True
    compiled_graph.current_callable = perturbed
    return compiled_graph


def _install() -> bool:
    """Wrap ``FxGraphCache._lookup_graph`` once (False where this torch lacks it)."""
    try:
        from torch._inductor.codecache import FxGraphCache
    except ImportError:
        return False
    lookup = FxGraphCache.__dict__.get("_lookup_graph")
    if lookup is None:
        return False
    if getattr(lookup, "_fuzzcomp_planted", False):
        return True
    inner = lookup.__func__ if isinstance(lookup, staticmethod) else lookup

    def planted_lookup(*args, **kwargs):
        graph, info = inner(*args, **kwargs)
        return (_perturbed(graph) if graph is not None else graph), info

    planted = staticmethod(planted_lookup)
    planted_lookup._fuzzcomp_planted = True
    planted._fuzzcomp_planted = True
    FxGraphCache._lookup_graph = planted
    return True


def stale_cache_bug(gm: torch.fx.GraphModule, example_inputs):
    """Inductor, with graphs served by the FX-graph cache perturbed (see the module doc)."""
    from torch._inductor.compile_fx import compile_fx
    _install()
    return compile_fx(gm, example_inputs)
