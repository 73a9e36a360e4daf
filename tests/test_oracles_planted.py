"""Each oracle is proven both ways: the planted fault is caught, the correct backend is silent."""
import pytest
import torch

from fuzzcomp.judge.check import localise
from fuzzcomp.run.execute import ExecOptions, configure_torch
from fuzzcomp.judge.check import check
from fuzzcomp.oracles.fp64rule import compare

from oracle_cases import (case, inplace_on_saved, mul_relu, mutate_input, transpose_out,
                          unused_input)

configure_torch()


def symptoms(c, options=ExecOptions()):
    obs, verdicts = check(c, options)
    assert obs.eager_valid
    return obs, {v.symptom for v in verdicts}, verdicts


@pytest.mark.parametrize("program", [mul_relu, transpose_out, lambda: mutate_input("transposed"),
                                     lambda: mutate_input("contiguous"), unused_input])
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_correct_backends_are_silent(program, backend):
    _, found, verdicts = symptoms(case(program(), backend, sizes=((4,), (5,), (4,))))
    assert not verdicts, verdicts


def test_perturbed_op_is_a_numeric_finding():
    _, found, _ = symptoms(case(mul_relu(), "fuzzcomp.planted:perturb_mul"))
    assert "numeric" in found


def test_wrong_gradient_only():
    obs, found, verdicts = symptoms(case(mul_relu(), "fuzzcomp.planted:wrong_gradient"))
    assert obs.stats["grad"] == "on" and obs.stats["grad_inputs"] == ["x", "y"]
    assert found == {"gradient"}, verdicts
    assert {v.label for v in verdicts} == {"grad of input x", "grad of input y"}


def test_gradients_off_hides_the_wrong_gradient():
    _, found, _ = symptoms(case(mul_relu(), "fuzzcomp.planted:wrong_gradient"), ExecOptions(grad="off"))
    assert not found


def test_dropped_mutation_for_noncontiguous_layout_only():
    _, found, _ = symptoms(case(mutate_input("transposed"), "fuzzcomp.planted:drop_mutation_noncontiguous"))
    assert "mutation" in found
    _, found, _ = symptoms(case(mutate_input("contiguous"), "fuzzcomp.planted:drop_mutation_noncontiguous"))
    assert not found


def test_stale_result_across_calls():
    c = case(mul_relu(), "fuzzcomp.planted:stale_result", sizes=((4,), (4,)), dynamic=False)
    _, found, verdicts = symptoms(c, ExecOptions(grad="off"))
    assert "numeric" in found
    assert min(v.call for v in verdicts) == 1
    # with gradients the stale outputs hang off a freed graph: backward fails only when compiled
    _, found, verdicts = symptoms(c)
    assert found and min(v.call for v in verdicts) == 1


def test_crash_only_on_symbolic_sizes():
    _, found, _ = symptoms(case(mul_relu(), "fuzzcomp.planted:crash_on_symbolic", dynamic=True))
    assert "compile-crash" in found
    _, found, _ = symptoms(case(mul_relu(), "fuzzcomp.planted:crash_on_symbolic", dynamic=False))
    assert not found


def test_crash_at_runtime():
    _, found, verdicts = symptoms(case(mul_relu(), "fuzzcomp.planted:runtime_crash", sizes=((4,), (4,))))
    assert found == {"runtime-crash"}
    assert verdicts[0].call == 1


def test_broken_aliasing():
    _, found, verdicts = symptoms(case(transpose_out(), "fuzzcomp.planted:break_aliasing"))
    assert found == {"aliasing"}
    assert "shares storage with x" in verdicts[0].detail


def test_recompiles_on_replay():
    obs, found, _ = symptoms(case(mul_relu(), "fuzzcomp.planted:forget_graphs"))
    assert "recompile" in found
    assert sum(obs.stats["replay_graphs_per_call"]) > 0


def test_recompile_limit_hit_is_a_finding():
    import torch._dynamo.config as dc
    name = "recompile_limit" if hasattr(dc, "recompile_limit") else "cache_size_limit"
    with dc.patch({name: 1}):
        obs, found, verdicts = symptoms(case(mul_relu(), "eager", sizes=((3,), (4,), (5,)), dynamic=False))
    assert obs.stats["recompile_limit_hit"] and obs.stats["recompile_limit_name"] == name
    assert "recompile" in found
    assert any("guard failures" in v.detail for v in verdicts)


def test_guard_failure_reasons_are_captured():
    obs, _, _ = symptoms(case(mul_relu(), "eager", sizes=((3,), (4,)), dynamic=False))
    assert obs.stats["compile_events"] == 2 == obs.stats["max_compile_events"]
    assert any("size mismatch" in r or "x" in r for r in obs.stats["guard_failures"])


def test_dynamic_true_reuses_one_graph():
    obs, found, _ = symptoms(case(mul_relu(), "eager", sizes=((3,), (4,), (9,)), dynamic=True))
    # Dynamo reuses one graph; the oracle's bound stays one compile per distinct call (ops add
    # size guards of their own, so the class model is not used to predict fewer)
    assert obs.stats["compile_events"] == 1 and obs.stats["max_compile_events"] == 3 and not found


def test_inductor_relu_bug():
    _, found, _ = symptoms(case(mul_relu(), "fuzzcomp.planted:inductor_relu_bug", sizes=((4,),)))
    assert "numeric" in found


def test_backward_rejection_in_eager_is_parity_not_a_finding():
    # generator-set requires_grad ("ir"): eager raises in backward; compiled must raise too
    for backend in ("eager", "aot_eager"):
        obs, verdicts = check(case(inplace_on_saved(), backend), ExecOptions(grad="ir"))
        assert obs.calls[0].eager.error[2].startswith("backward: ")
        assert "inplace operation" in obs.calls[0].eager.error[1]
        assert obs.calls[0].compiled.error is not None
        assert not verdicts
    # auto mode keeps the forward checks and records the rejection
    obs, verdicts = check(case(inplace_on_saved(False), "aot_eager"))
    assert obs.eager_valid and obs.stats["grad"] == "rejected-in-backward" and not verdicts


def test_none_grad_against_zero_grad_counts():
    z = torch.zeros(3)
    assert compare(None, None, None, None)[0] == "ok"
    assert compare(None, None, None, z)[0] == "mismatch"
    assert compare(z, z.clone(), z.double(), None)[0] == "mismatch"
    obs, verdicts = check(case(unused_input(), "aot_eager"))
    rec = obs.calls[0]
    i = rec.eager.labels.index("grad of input y")
    assert rec.eager.values[i] is None and rec.compiled.values[i] is None and not verdicts


def test_strict_half_precision_mode():
    e = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float16)
    off = e + torch.tensor([0.0, 2 ** -9, 0.0], dtype=torch.float16) * 4
    assert compare(e, e.clone(), e.double(), e.clone(), strict=True)[0] == "ok"
    assert compare(e, e.clone(), e.double(), off, strict=True)[0] == "mismatch"
    obs, verdicts = check(case(mul_relu("float16"), "aot_eager"), ExecOptions(strict_precision=True))
    assert obs.stats["strict_precision"] and not verdicts


def test_localise_names_the_first_rung_that_shows_it():
    c = case(mul_relu(), "fuzzcomp.planted:wrong_gradient")
    _, verdicts = check(c)
    ladder = (("eager", "capture"), ("aot_eager", "autograd"),
              ("fuzzcomp.planted:wrong_gradient", "planted"))
    out = localise(c, verdicts[0], ladder=ladder)
    assert out["stage"] == "planted" and out["rungs"]["eager"] == [] and out["rungs"]["aot_eager"] == []


def test_localise_inductor_fault_on_the_real_ladder():
    c = case(mul_relu(), "fuzzcomp.planted:inductor_relu_bug", sizes=((4,),))
    _, verdicts = check(c)
    ladder = (("eager", "capture"), ("aot_eager", "autograd"),
              ("aot_eager_decomp_partition", "decomposition"),
              ("fuzzcomp.planted:inductor_relu_bug", "inductor"))
    out = localise(c, verdicts[0], ladder=ladder)
    assert out["stage"] == "inductor", out


@pytest.mark.slow
def test_bisector_narrows_an_inductor_fault_to_the_lowering():
    import torch._inductor.config as cfg
    c = case(mul_relu(), "inductor", sizes=((4,),))
    with cfg.patch({"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}):
        _, verdicts = check(c)
        out = localise(c, verdicts[0], bisect=True)
    assert out["stage"] == "inductor"
    assert "subsystem=lowerings" in out["bisect"] and "relu" in out["bisect"]
