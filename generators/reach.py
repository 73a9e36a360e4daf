"""Capabilities beyond plain op programs: what the caller does, special values, library modules,
global state, scalar outputs and data-dependent shapes.

Contract: ``CAPABILITIES`` maps each capability to its default weight (the chance that one case
gets it), and ``ARG_CAPABILITIES`` the argument capabilities of ``reach_args`` (drawn by
``plan_args`` at the end of the stream), and ``TAIL_CAPABILITIES`` the forms of ``tail_forms``
(drawn by ``plan_tail`` after them); ``plan(ch, weights, force)`` draws the set one case gets (forced ones always, and no
draw is spent on them, so forcing one keeps the rest of the case stable). ``setup`` marks special
inputs and module state before the body is built; ``statements`` returns the builders of body
statements to interleave with the regular ones; ``finish_calls`` adds each call's caller actions
(and train/eval for library modules); ``compile_config`` draws the per-case dynamo config knobs.
Everything is drawn from the choice stream; nothing here runs torch.

Caller actions (``Call.caller``): ``autocast`` (the call runs under a bf16 CPU autocast),
``deterministic`` (under ``torch.use_deterministic_algorithms(True)``), ``eval`` (the model is
in eval mode; without it, train mode), ``mutate_output`` (the caller writes the first float output
in place before backward, then reads the inputs again), ``mutate_input`` (the caller writes a float
input in place between forward and backward).
"""
from __future__ import annotations

import dataclasses

from .choices import ChoiceStream
from .ir import Call, Input

#: capability -> default weight: the chance one case has it (each drawn independently)
CAPABILITIES = {
    "caller": 0.10,     # actions around the call: autocast/deterministic contexts, mutations
    "special": 0.07,    # inputs salted with NaN, +-inf, -0.0, huge and tiny magnitudes
    "constants": 0.04,  # a subgraph of pure constants holding special values
    "nnlib": 0.07,      # torch.nn library modules, train and eval, with and without grad
    "gstate": 0.05,     # global state changed inside the function
    "scalars": 0.07,    # .item()/.tolist(), nonzero/masked_select/unique, and the capture knobs
}

#: special and out-of-domain values reaching op arguments (``reach_args``): capability -> the
#: chance one case gets it. Drawn last in the choice stream (after the call schedule) and built
#: at the end of the body, so a seed that draws none keeps its program byte for byte.
ARG_CAPABILITIES = {
    "fill_softmax": 0.03,   # a constant fill through an unguarded log/acosh into softmax
    "inf_divisor": 0.03,    # remainder/fmod by +-inf or a huge finite divisor
    "half_divisor": 0.08,   # remainder/fmod of fp16/bf16 inputs by a float they cannot represent (needs a half input)
}

#: forms built at the end of the body (``tail_forms``): capability -> the chance one case gets
#: it. Drawn after the argument capabilities and their statements, the stream's very last draws.
TAIL_CAPABILITIES = {
    "out_topk_max_norm": 0.03,  # out= on topk, max/min (values, indices), linalg.norm
    "widen_view_out": 0.04,     # an unmasked int32/float32 view of int16 or int-made fp16/bf16 data (needs one)
    "nested_region": 0.03,      # a torch.compiler.nested_compile_region helper called twice
}

#: compile settings users run with that the fuzzer turns off by default: setting -> the chance one
#: case gets it. Drawn after everything else in the stream, so a seed keeps its program and
#: schedule byte for byte. ``warm_cache``: Inductor's FX-graph and AOTAutograd caches on, the case
#: judged again in a second process served from them (``CompileSpec.cache = "warm"``; each costs
#: a second compile, so the share stays small).
SETTINGS = {
    "warm_cache": 0.04,
}

CALLER_ACTIONS = ("autocast", "deterministic", "mutate_output", "mutate_input")


def plan(ch: ChoiceStream, weights: dict[str, float], force=()) -> frozenset[str]:
    out = set()
    for name in CAPABILITIES:
        if name in force:
            out.add(name)
        elif weights.get(name, 0.0) > 0 and ch.boolean(weights[name]):
            out.add(name)
    return frozenset(out)


def plan_args(ch: ChoiceStream, weights: dict[str, float], force=()) -> tuple[str, ...]:
    """The argument capabilities one case gets (``ARG_CAPABILITIES``), like ``plan``."""
    out = []
    for name in ARG_CAPABILITIES:
        if name in force or (weights.get(name, 0.0) > 0 and ch.boolean(weights[name])):
            out.append(name)
    return tuple(out)


def plan_cache(ch: ChoiceStream, weights: dict[str, float], force=()) -> str:
    """``CompileSpec.cache`` of one case: "warm" with the ``warm_cache`` weight, else ""."""
    if "warm_cache" in force:
        return "warm"
    w = weights.get("warm_cache", 0.0)
    return "warm" if w > 0 and ch.boolean(w) else ""


def plan_tail(ch: ChoiceStream, weights: dict[str, float], force=(), names=tuple(TAIL_CAPABILITIES)) -> tuple[str, ...]:
    """The tail forms one case gets (``TAIL_CAPABILITIES``, or the given ``names``: the edges
    use it too), like ``plan_args``; one whose weight is 0 (``nested_region`` where this torch
    lacks the decorator) spends no draw, even when forced."""
    out = []
    for name in names:
        if weights.get(name, 0.0) > 0 and (name in force or ch.boolean(weights[name])):
            out.append(name)
    return tuple(out)


def weights_of(overrides) -> dict[str, float]:
    from .edges import EDGE_CAPABILITIES
    from .tail_forms import HAS_NESTED
    w = dict(CAPABILITIES) | dict(ARG_CAPABILITIES) | dict(TAIL_CAPABILITIES) | dict(SETTINGS) | dict(EDGE_CAPABILITIES)
    for name, value in overrides:
        if name not in w:
            raise ValueError(f"unknown capability {name!r}; known: {', '.join(w)}")
        w[name] = float(value)
    if not HAS_NESTED:
        w["nested_region"] = 0.0  # never generated where this torch lacks the decorator
    return w


def special_inputs(ch: ChoiceStream, inputs: list[Input]) -> list[Input]:
    """Mark one or more float tensor inputs as salted with special values."""
    floats = [k for k, i in enumerate(inputs) if i.kind == "tensor" and i.type.is_float]
    if not floats:
        return inputs
    picked = {k for k in floats if ch.boolean(0.6)} or {ch.choice(floats)}
    return [dataclasses.replace(i, special=True) if k in picked else i for k, i in enumerate(inputs)]


def finish_calls(ch: ChoiceStream, calls: tuple[Call, ...], caps: frozenset[str], has_library: bool,
                 grad_names) -> tuple[Call, ...]:
    """Caller actions per call; with library modules, train/eval per call and eval calls
    often under no_grad (the eval/no-grad fast paths are different kernels)."""
    out = []
    for call in calls:
        acts: list[str] = []
        mode = call.grad_mode
        if "caller" in caps:
            k = ch.weighted(("context", "mutate", "grad_mode", "both"), (3, 3, 2, 1))
            if k in ("context", "both"):
                acts.append(ch.weighted(("autocast", "deterministic"), (2, 1)))
            if k in ("mutate", "both"):
                acts.append(ch.choice(("mutate_output", "mutate_input")) if grad_names else "mutate_output")
            if k == "grad_mode":
                mode = ch.weighted(("no_grad", "inference"), (2, 1))
        if has_library:
            if ch.boolean(0.5):
                acts.append("eval")
                if ch.boolean(0.5):
                    mode = "no_grad"
        out.append(dataclasses.replace(call, caller=tuple(sorted(acts)), grad_mode=mode,
                                       inference_inputs=call.inference_inputs and mode == "inference"))
    return tuple(out)


def compile_config(ch: ChoiceStream, has_scalars: bool) -> tuple:
    """Dynamo's capture knobs for programs that read scalars or make data-dependent shapes:
    on and off, so both the graph-break path and the unbacked-symbol path run."""
    if not has_scalars:
        return ()
    return (("capture_dynamic_output_shape_ops", ch.boolean(0.5)),
            ("capture_scalar_outputs", ch.boolean(0.5)))


#: features of the reach capabilities (see ``reach_features``)
REACH_FEATURES = (
    "caller_autocast", "caller_deterministic", "caller_mutate_output", "caller_mutate_input",
    "special_inputs", "const_graph", "nn_mha", "nn_encoder", "nn_layer_norm", "nn_batch_norm",
    "nn_instance_norm", "nn_embedding", "nn_embedding_bag", "nn_eval", "nn_train", "nn_eval_no_grad",
    "set_grad_enabled_inside", "deterministic_inside", "default_dtype_inside", "global_rebound",
    "scalar_item", "scalar_tolist", "dd_nonzero", "dd_masked_select", "dd_unique",
    "capture_scalar_outputs", "capture_dynamic_output_shape_ops", "scalar_item_out", "warm_cache",
) + tuple(ARG_CAPABILITIES)
_OP_FEATURES = {
    "const:tensor": "const_graph", "state:set_grad_enabled": "set_grad_enabled_inside",
    "state:use_deterministic_algorithms": "deterministic_inside",
    "state:set_default_dtype": "default_dtype_inside", "state:rebind_global": "global_rebound",
    "dds:item": "scalar_item", "dds:item_float": "scalar_item", "dds:tolist": "scalar_tolist",
    "dds:item_out": "scalar_item_out",
    "dds:nonzero": "dd_nonzero", "dds:masked_select": "dd_masked_select", "dds:unique": "dd_unique",
}


def reach_features(case) -> set[str]:
    from .ir import walk_program
    from .reach_args import arg_features
    f: set[str] = arg_features(case)
    for s in walk_program(case.program):
        op = getattr(s, "op", "")
        if op in _OP_FEATURES:
            f.add(_OP_FEATURES[op])
    m = case.program.module
    library = getattr(m, "library", ()) if m is not None else ()
    for _attr, ctor in library:
        name = ctor.split("(")[0].rsplit(".", 1)[-1]
        f.add({"MultiheadAttention": "nn_mha", "TransformerEncoderLayer": "nn_encoder", "LayerNorm": "nn_layer_norm",
               "BatchNorm1d": "nn_batch_norm", "InstanceNorm1d": "nn_instance_norm", "Embedding": "nn_embedding",
               "EmbeddingBag": "nn_embedding_bag"}[name])
    if any(i.special for i in case.program.inputs):
        f.add("special_inputs")
    for c in case.calls:
        for a in c.caller:
            if a in CALLER_ACTIONS:
                f.add("caller_" + a)
        if library:
            f.add("nn_eval" if "eval" in c.caller else "nn_train")
            if "eval" in c.caller and c.grad_mode != "grad":
                f.add("nn_eval_no_grad")
    for name, on in case.compile.config:
        if on:
            f.add(name)
    if getattr(case.compile, "cache", "") == "warm":
        f.add("warm_cache")
    return f
