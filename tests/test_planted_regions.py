"""Two generator forms and the oracle floor one of them needs: an ``autocast(enabled=False)``
region nested in the program's autocast region that computes in full precision again, judged by
a per-output precision floor; and an argument that is a non-leaf view of a base requiring grad,
written in place (autograd rebases it). Each is proven by a planted fault only it triggers, found
on cases with the form while ``aot_eager`` stays silent on the same cases, and silent on cases
of the neighbouring forms."""
from __future__ import annotations

import warnings

import pytest
import torch

from fuzzcomp.generators import GenConfig, generate
from fuzzcomp.generators.features import features
from fuzzcomp.generators.ir import (Assign, Call, Case, CompileSpec, Input, Mutate, Program, Ref, TensorType,
                                    With)
from fuzzcomp.run.value_floors import output_floor_eps

F32 = TensorType(("s0", "s0"), "float32")
BF = TensorType(("s0", "s0"), "bfloat16")
MM = "torch.tanh(torch.matmul({0}, {0}.transpose(-1, -2)))"
OFF_FLOAT = "torch.tanh(torch.matmul({0}.float(), {1}.float()))"
#: autocast blocks drawn 30 times as often: the forms inside them come within a few seeds
AUTOCAST = GenConfig(kind_scale=(("autocast", 30.0),), reach_weights=(("gstate", 0.0),))
PLAIN = GenConfig(reach_weights=(("gstate", 0.0),))


def _case(body, outputs, calls=(Call((4,), 1),)) -> Case:
    return Case(Program((Input("x", F32),), tuple(body), tuple(outputs), ("s0",)), tuple(calls),
                CompileSpec(backend="eager"), 0, "test")


def _autocast_body():
    return [With("autocast", (Assign("a", "autocast:matmul", MM, (Ref("x"),), BF),
                              With("no_autocast", (
                                  Assign("b", "autocast:off_float", OFF_FLOAT, (Ref("a"), Ref("x")), F32),
                                  Assign("f", "autocast:off_full", MM, (Ref("x"),), F32))))),
            Assign("j", "autocast:join", "{0}.to({1}.dtype)", (Ref("b"), Ref("x")), F32)]


def test_full_precision_output_of_a_nested_off_region_gets_its_own_floor():
    """The program casts to bfloat16 (its autocast region), so the program-wide floor is
    bfloat16's; the value made in full precision inside the nested region from float32 values
    only is judged by its own type's floor, the one made from the bfloat16 product is not."""
    case = _case(_autocast_body(), ("f", "j"))
    assert output_floor_eps(case, 2.0 ** -7) == {"output[0]": 2.0 ** -23}  # float32's own eps


def test_a_coarse_value_reaching_an_output_keeps_the_coarse_floor():
    body = _autocast_body() + [Assign("g", "torch.add", "torch.add({0}, {1})", (Ref("f"), Ref("j")), F32),
                               Assign("h", "torch.sin", "torch.sin({0})", (Ref("f"),), F32)]
    case = _case(body, ("g", "h"))
    assert output_floor_eps(case, 2.0 ** -7) == {"output[1]": 2.0 ** -23}


def test_an_in_place_write_of_a_coarse_value_coarsens_everything_it_touches():
    """``f`` is written with the bfloat16 join in place: through views its data may reach any
    value connected to it, so none of them keeps a finer floor."""
    body = _autocast_body() + [Assign("v", "Tensor.t", "{0}.t()", (Ref("f"),), F32),
                               Mutate("f", "Tensor.add_", "{0}.add_({1})", (Ref("j"),))]
    assert output_floor_eps(_case(body, ("v", "f")), 2.0 ** -7) == {}


def test_a_caller_autocast_or_an_early_return_keeps_the_program_wide_floor():
    calls = (Call((4,), 1), Call((4,), 2, caller=("autocast",)))
    assert output_floor_eps(_case(_autocast_body(), ("f", "j"), calls), 2.0 ** -7) == {}
    assert output_floor_eps(_case(_autocast_body(), ("f", "j")), 0.0) == {}


def test_the_judge_uses_the_per_output_floor():
    """A float32 value off by bfloat16 rounding passes the bfloat16 floor and fails its own."""
    from fuzzcomp.oracles.judge import _judge_values
    from fuzzcomp.oracles.observation import CallRecord
    from fuzzcomp.run.runtime import Outcome
    ref = torch.linspace(-1, 1, 64, dtype=torch.float64)
    e = ref.float()
    c = e.bfloat16().float()
    rec = CallRecord(Outcome([e], ["output[0]"], None), Outcome([e.clone()], ["output[0]"], None),
                     Outcome([ref], ["output[0]"], None), Outcome([c], ["output[0]"], None))
    assert _judge_values("x", 0, rec, floor_eps=2.0 ** -7) == []
    assert _judge_values("x", 0, rec, floor_eps=2.0 ** -7, by_label={"output[0]": 0.0})


def test_nonleaf_view_arguments_are_written_first_and_their_base_requires_grad():
    """The form: the aliased argument is a view of ``base * 1`` (non-leaf once the base requires
    grad), the program's first statement writes it in place, the base requires grad in every
    call and nothing writes the base; the runtime builds such an argument as a non-leaf view."""
    from fuzzcomp.run.case_tables import call_entry, input_specs
    from fuzzcomp.run.runtime import make_inputs
    found = 0
    for seed in range(400):
        case = generate(seed, PLAIN)
        if "nonleaf_view_write" not in features(case):
            continue
        p = case.program
        view = next(i for i in p.inputs if i.kind == "alias" and i.view.startswith("nonleaf:"))
        first = p.body[0]
        assert isinstance(first, Mutate) and first.target == view.name, first
        assert not any(isinstance(s, Mutate) and s.target == view.alias_of for s in p.body)
        for call in case.calls:
            assert view.alias_of in call.requires_grad
        entry = call_entry(case, case.calls[0])
        env = dict(zip(p.symbols, entry[0]))
        xs = make_inputs(input_specs(case), env, entry[1], call_extra=entry[2])
        names = [i.name for i in p.inputs]
        x, base = xs[names.index(view.name)], xs[names.index(view.alias_of)]
        assert x.requires_grad and not x.is_leaf and x._is_view() and base.is_leaf and base.requires_grad
        found += 1
        if found == 3:
            break
    assert found == 3


def test_nonleaf_view_programs_are_eager_valid():
    """Eager accepts the write (a view of a leaf requiring grad would raise) and its backward."""
    from fuzzcomp.judge.check import eager_validity
    seeds = [s for s in range(300) if "nonleaf_view_write" in features(generate(s))][:4]
    assert len(seeds) == 4
    valid, _fp64, _calls, errors = eager_validity(seeds)
    assert valid == len(seeds), errors


def _cases(config, feature: str, limit: int, n: int, without: str | None = None):
    out = []
    for seed in range(limit):
        case = generate(seed, config)
        f = features(case)
        if (without is None and feature in f) or (without is not None and without in f and feature not in f):
            out.append(case)
            if len(out) == n:
                break
    return out


# (generator config, feature, planted backend, neighbouring feature whose cases stay silent)
FORMS = [
    (AUTOCAST, "autocast_off_full", "autocast_off_bug", "autocast_nested_off"),
    (PLAIN, "nonleaf_view_write", "rebased_view_grad_bug", "aliased_args"),
]


@pytest.mark.slow
@pytest.mark.parametrize("config,feature,backend,neighbour", FORMS, ids=[f[2] for f in FORMS])
def test_planted_fault_found_and_aot_eager_silent(config, feature, backend, neighbour):
    from fuzzcomp.judge.check import check
    from fuzzcomp.oracles.judge import judge
    from fuzzcomp.run.execute import configure_torch
    configure_torch()
    cases = _cases(config, feature, 400, 6)
    assert cases, f"no case with {feature}"
    found = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            obs, verdicts = check(case.with_compile(backend=f"fuzzcomp.planted:{backend}"))
            if verdicts:
                found = case
                break
        assert found is not None, f"{backend} not found on {len(cases)} cases with {feature}"
        if feature == "autocast_off_full":
            # the per-output floor finds it: under the program-wide bfloat16 floor it passes
            assert all(v.oracle == "fp64-rule" for v in verdicts), verdicts
            obs.stats["floor_eps_by_label"] = {}
            assert not [v for v in judge(obs) if v.oracle == "fp64-rule"]
        else:
            assert any(v.symptom == "gradient" for v in verdicts), verdicts
        _, verdicts = check(found.with_compile(backend="aot_eager"))
    assert not verdicts, (found.seed, [v.detail for v in verdicts])


@pytest.mark.slow
@pytest.mark.parametrize("config,feature,backend,neighbour", FORMS, ids=[f[2] for f in FORMS])
def test_fault_needs_its_form_not_its_neighbour(config, feature, backend, neighbour):
    """Cases with the neighbouring form (a nested off region of the bfloat16 product only; an
    aliased argument that is a plain view) leave the fault silent."""
    from fuzzcomp.judge.check import check
    from fuzzcomp.run.execute import configure_torch
    configure_torch()
    cases = _cases(config, feature, 400, 2, without=neighbour)
    assert len(cases) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            _, verdicts = check(case.with_compile(backend=f"fuzzcomp.planted:{backend}"))
            assert not verdicts, (case.seed, [v.detail for v in verdicts])
