"""Capabilities beyond plain op programs: what the caller does, special values, library modules,
global state, scalar outputs and data-dependent shapes.

Contract: ``CAPABILITIES`` maps each capability to its default weight (the chance that one case
gets it); ``plan(ch, weights, force)`` draws the set one case gets (forced ones always, and no
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

CALLER_ACTIONS = ("autocast", "deterministic", "mutate_output", "mutate_input")


def plan(ch: ChoiceStream, weights: dict[str, float], force=()) -> frozenset[str]:
    out = set()
    for name in CAPABILITIES:
        if name in force:
            out.add(name)
        elif weights.get(name, 0.0) > 0 and ch.boolean(weights[name]):
            out.add(name)
    return frozenset(out)


def weights_of(overrides) -> dict[str, float]:
    w = dict(CAPABILITIES)
    for name, value in overrides:
        if name not in w:
            raise ValueError(f"unknown capability {name!r}; known: {', '.join(CAPABILITIES)}")
        w[name] = float(value)
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
