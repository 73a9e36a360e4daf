"""The reach capabilities (caller actions, special values, library modules, global state,
scalar outputs): each one proven by a planted fault only it can trigger, found in a short
campaign with the capability forced on, and the correct compilation silent on the same programs."""
import warnings

import pytest
import torch

from fuzzcomp.run.execute import configure_torch
from fuzzcomp.judge.check import check
from fuzzcomp.generators import emit, from_jsonable, generate, to_jsonable
from fuzzcomp.generators.build import GenConfig
from fuzzcomp.generators.features import features
from fuzzcomp.oracles.special import compare_special

configure_torch()
warnings.filterwarnings("ignore")

CAPTURE_ON = (("capture_dynamic_output_shape_ops", True), ("capture_scalar_outputs", True))

# capability, planted backend, oracle expected to see it, compile config, seeds to search
CASES = [
    ("caller", "ignore_caller_autocast", None, None, 25),
    ("constants", "flip_negative_zero", "exact-special", None, 15),
    ("nnlib", "perturb_library_kernels", "fp64-rule", None, 10),
    ("gstate", "drop_grad_mode_change", None, None, 20),
    ("scalars", "miscompute_after_item", None, CAPTURE_ON, 8),
]


def _campaign(cap, backend, config, seeds, stop_at_first=True):
    found = []
    for seed in range(seeds):
        case = generate(seed, GenConfig(force=(cap,))).with_compile(backend=backend)
        if config is not None:
            case = case.with_compile(config=config)
        obs, verdicts = check(case)
        if verdicts:
            found.append((seed, case, verdicts))
            if stop_at_first:
                break
    return found


@pytest.mark.parametrize("cap,planted,oracle,config,seeds", CASES, ids=[c[1] for c in CASES])
def test_planted_fault_found_and_correct_backend_silent(cap, planted, oracle, config, seeds):
    found = _campaign(cap, "fuzzcomp.planted:" + planted, config, seeds)
    assert found, f"{planted} not found in {seeds} {cap} cases"
    seed, case, verdicts = found[0]
    if oracle is not None:
        assert any(v.oracle == oracle for v in verdicts), verdicts
    for backend in ("eager", "aot_eager"):
        _, clean = check(case.with_compile(backend=backend))
        assert not clean, (backend, seed, clean)


@pytest.mark.parametrize("cap,planted", [("caller", "ignore_caller_autocast"), ("nnlib", "perturb_library_kernels"),
                                         ("gstate", "drop_grad_mode_change"), ("constants", "flip_negative_zero"),
                                         ("scalars", "miscompute_after_item")])
def test_planted_fault_needs_its_capability(cap, planted):
    """The same planted backend on plain programs (no capability) finds nothing."""
    for seed in range(4):
        case = generate(seed, GenConfig(reach_weights=tuple((c, 0.0) for c in
                                                            ("caller", "special", "constants", "nnlib",
                                                             "gstate", "scalars"))))
        _, verdicts = check(case.with_compile(backend="fuzzcomp.planted:" + planted))
        assert not verdicts, (seed, verdicts)


def test_exact_rule_classes_and_signs():
    nan, inf = float("nan"), float("inf")
    e = torch.tensor([nan, inf, -inf, -0.0, 1.0])
    r = e.double()
    assert compare_special(e, e.clone(), r, e.clone(), sign=True)[0] == "ok"
    # a different NaN payload is still NaN
    payload = torch.tensor([-nan, inf, -inf, -0.0, 1.0])
    assert compare_special(e, e.clone(), r, payload, sign=True)[0] == "ok"
    assert compare_special(e, e.clone(), r, torch.tensor([0.0, inf, -inf, -0.0, 1.0]), True)[0] == "mismatch"
    assert compare_special(e, e.clone(), r, torch.tensor([nan, -inf, -inf, -0.0, 1.0]), True)[0] == "mismatch"
    flipped = torch.tensor([nan, inf, -inf, 0.0, 1.0])
    assert compare_special(e, e.clone(), r, flipped, sign=True)[0] == "mismatch"
    assert compare_special(e, e.clone(), r, flipped, sign=False)[0] == "ok"
    # eager overflowed where fp64 did not: compiled keeping the range is fine
    over = torch.tensor([inf])
    assert compare_special(over, over.clone(), torch.tensor([3.5e38], dtype=torch.float64),
                           torch.tensor([3.4e38]), True)[0] == "ok"
    # a zero fp64 does not confirm (an underflow) is not judged for sign
    assert compare_special(torch.tensor([-0.0]), torch.tensor([-0.0]), torch.tensor([-1e-50], dtype=torch.float64),
                           torch.tensor([0.0]), True)[0] == "ok"


def test_caller_output_write_before_backward_is_judged_on_parity():
    """Eager raising in backward after the caller wrote an output saved for backward is parity
    for a correct backend, not an invalid case: the case is judged, and stays silent."""
    from fuzzcomp.generators.ir import Call
    from oracle_cases import case as make_case
    from oracle_cases import inplace_on_saved
    import dataclasses
    c = make_case(inplace_on_saved(False), "aot_eager", sizes=((4,),))
    prog = c.program
    # exp's output is returned and saved for backward: the caller doubles it before backward
    prog = dataclasses.replace(prog, body=prog.body[:1])
    c = dataclasses.replace(c, program=prog, calls=(Call((4,), 11, caller=("mutate_output",)),))
    obs, verdicts = check(c)
    err = obs.calls[0].eager.error
    assert err is not None and err[2].startswith("backward: ") and "inplace" in err[1]
    assert obs.calls[0].compiled.error is not None and not verdicts


def test_features_round_trip_and_weights():
    seen = set()
    for seed in range(40):
        for cap in ("caller", "special", "constants", "nnlib", "gstate", "scalars"):
            case = generate(seed, GenConfig(force=(cap,)))
            assert from_jsonable(to_jsonable(case)) == case
            compile(emit(case.program), "<t>", "exec")
            seen |= features(case)
    for f in ("caller_autocast", "caller_mutate_output", "special_inputs", "const_graph", "nn_eval_no_grad",
              "set_grad_enabled_inside", "global_rebound", "scalar_item", "dd_nonzero",
              "capture_scalar_outputs"):
        assert f in seen, f
    with pytest.raises(ValueError):
        generate(0, GenConfig(reach_weights=(("nope", 1.0),)))
