"""The recompile oracle and its functional twins against planted guard faults: each fault is
flagged with the cause its twin names, on the programs and schedules with that feature only,
while real Dynamo (eager, aot_eager) stays silent on the same cases, in particular on a
schedule whose calls differ only in inputs created under inference mode (Dynamo guards their
dispatch keys, so it compiles once for each kind and the bound allows that)."""
from __future__ import annotations

import warnings

import pytest

from fuzzcomp.findings.triage import bucket_of
from fuzzcomp.generators import generate
from fuzzcomp.generators.ir import Assign, Call, Case, CompileSpec, Input, Lit, Mutate, Program, Ref, TensorType
from fuzzcomp.judge.check import check
from fuzzcomp.run.execute import configure_torch

T = TensorType(("s0", "s0"), "float32")
PLANTED = "fuzzcomp.planted:"
pytestmark = pytest.mark.slow


def _sin_add() -> Program:
    return Program((Input("x", T), Input("y", T)),
                   (Assign("v", "torch.sin", "torch.sin({0})", (Ref("x"),), T),
                    Assign("w", "torch.add", "torch.add({0}, {1})", (Ref("v"), Ref("y")), T)), ("w",), ("s0",))


def _writes_input() -> Program:
    return Program((Input("x", T), Input("y", T)),
                   (Mutate("x", "Tensor.add_", "{0}.add_({1})", (Ref("x"), Ref("y"))),
                    Assign("w", "torch.mul", "torch.mul({0}, {1})", (Ref("x"), Lit(2.0)), T)), ("w",), ("s0",))


def _case(program, inference=(False, True, False, True), mode="inference") -> Case:
    """Same sizes every call: the calls differ only in how their inputs were created."""
    calls = tuple(Call((4,), 7 + k, grad_mode=mode, inference_inputs=inf) for k, inf in enumerate(inference))
    return Case(program, calls, CompileSpec(backend="eager"), 0, "test")


def _recompiles(case, backend):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obs, verdicts = check(case.with_compile(backend=backend))
    assert obs.eager_valid
    return obs, [v for v in verdicts if v.symptom == "recompile"]


@pytest.fixture(autouse=True, scope="module")
def _torch():
    configure_torch()


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_real_dynamo_is_silent_on_calls_differing_only_by_inference_inputs(backend):
    obs, found = _recompiles(_case(_sin_add()), backend)
    assert found == []
    # Dynamo did compile again for the inference tensors (dispatch keys): the bound allowed it
    assert obs.stats["compile_events"] == obs.stats["max_compile_events"] == 2
    assert obs.stats["replay_graphs_per_call"] == [0, 0, 0, 0]


def test_inference_fault_is_flagged_with_its_cause():
    case = _case(_sin_add())
    obs, found = _recompiles(case, PLANTED + "inference_recompile_bug")
    assert [v.signature.rsplit(" | ", 1)[-1] for v in found[:1]] == ["cause: inference-inputs"]
    assert obs.stats["recompile_twins"]["twins"]["inference-inputs"] == "stops"
    # the fault needs inference tensors: the same program without them is silent
    assert _recompiles(_case(_sin_add(), (False,) * 4), PLANTED + "inference_recompile_bug")[1] == []


def test_inplace_fault_is_flagged_with_its_cause_and_real_dynamo_is_silent():
    case = _case(_writes_input(), (False,) * 3, mode="grad")
    obs, found = _recompiles(case, PLANTED + "inplace_recompile_bug")
    assert found and found[0].signature.endswith("cause: in-place")
    assert _recompiles(case, "aot_eager")[1] == []
    assert _recompiles(_case(_sin_add(), (False,) * 3, mode="grad"), PLANTED + "inplace_recompile_bug")[1] == []


def test_two_root_causes_on_one_case_get_two_buckets():
    case = _case(_sin_add())
    _, inference = _recompiles(case, PLANTED + "inference_recompile_bug")
    obs, always = _recompiles(case, PLANTED + "always_recompile_bug")
    assert always[0].signature.endswith("cause: program")
    assert obs.stats["recompile_twins"]["twins"]["inference-inputs"] == "recompiles"
    assert bucket_of(always[0]) != bucket_of(inference[0])


def _inference_cases(n=3, limit=400):
    out = []
    for seed in range(limit):
        case = generate(seed)
        if any(c.inference_inputs for c in case.calls):
            out.append(case)
            if len(out) == n:
                break
    return out


def test_generated_inference_schedules_fault_found_and_real_dynamo_silent():
    cases = _inference_cases()
    assert cases
    causes = []
    for case in cases:
        obs, found = _recompiles(case, PLANTED + "inference_recompile_bug")
        assert found, f"seed {case.seed}: the planted fault went unseen"
        cause = obs.stats["recompile_twins"]["cause"]
        # a graph break under inference mode makes inference intermediates too: then only
        # leaving inference mode removes every inference tensor
        assert cause == "inference-inputs" or (cause == "grad-mode" and obs.stats["graph_breaks"]), \
            (case.seed, obs.stats["recompile_twins"])
        causes.append(cause)
        assert _recompiles(case, "aot_eager")[1] == [], f"seed {case.seed}: aot_eager recompiled"
    assert "inference-inputs" in causes
