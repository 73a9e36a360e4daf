"""The argument capabilities (special and out-of-domain values reaching op arguments) and the newer
argument forms: each one proven by a planted fault only it can trigger, found on a few cases with
the capability forced on, while a correct compilation (aot_eager) of the same case stays silent
and the fault stays silent on programs without the capability."""
from __future__ import annotations

import warnings

import pytest

from fuzzcomp.generators import GenConfig, generate
from fuzzcomp.generators.features import features
from fuzzcomp.generators.features_ops import _stmt_features
from fuzzcomp.generators.ir import Assign, Mutate, walk_program
from fuzzcomp.generators.reach_args import _OP_FEATURE
from fuzzcomp.judge.check import check
from fuzzcomp.run.execute import configure_torch
from test_planted_forms import _live_names

CAPTURE_ON = (("capture_dynamic_output_shape_ops", True), ("capture_scalar_outputs", True))
#: the oracles that may see the fault: a NaN lost by the exact rule, a NaN made where eager is
#: finite by either, rounding by the fp64 rule
ORACLE = {"inf_divisor": ("exact-special", "fp64-rule"), "fill_softmax": ("exact-special",),
          "half_divisor": ("fp64-rule",)}

# (generator config, feature the case must have, planted backend, compile config, seeds to search)
CASES = [
    ({"force": ("inf_divisor",)}, "inf_divisor", "inf_divisor_bug", None, 40),
    ({"force": ("fill_softmax",)}, "fill_softmax", "softmax_special_bug", None, 40),
    ({"force": ("half_divisor",)}, "half_divisor", "half_divisor_bug", None, 40),
    ({"force": ("scalars",)}, "scalar_item_out", "item_output_bug", CAPTURE_ON, 200),
    ({"scatter_reduce_weight": 30.0}, "index_reduce_long_source", "index_reduce_long_bug", None, 120),
    ({"forms_weight": 30.0}, "matmul_column", "matmul_column_bug", None, 200),
    ({"resample_weight": 30.0}, "interpolate_guarded_scale", "guarded_scale_bug", None, 120),
]


def _has_live(case, feature: str) -> bool:
    """Some statement with the feature makes a value that reaches the compared results."""
    live = _live_names(case.program)
    for s in walk_program(case.program):
        if not isinstance(s, (Assign, Mutate)):
            continue
        feats = _stmt_features(s.op, s.template) | {_OP_FEATURE.get(s.op)}
        if s.op == "dds:item_out":
            feats.add("scalar_item_out")
        if feature in feats and (s.out if isinstance(s, Assign) else s.target) in live:
            return True
    return False


def _cases(cfg: dict, feature: str, limit: int, n: int = 8):
    # no global state changed inside the function: aot_eager loses such changes on cached calls,
    # a known bug of its own (corpus/known_bugs.json) that the correct-backend check must not meet
    config = GenConfig(**cfg, reach_weights=(("gstate", 0.0),))
    out = []
    for seed in range(limit):
        case = generate(seed, config)
        if feature in features(case) and _has_live(case, feature):
            out.append(case)
            if len(out) == n:
                break
    return out


@pytest.mark.slow
@pytest.mark.parametrize("cfg,feature,backend,config,limit", CASES, ids=[c[2] for c in CASES])
def test_planted_fault_found_and_correct_backend_silent(cfg, feature, backend, config, limit):
    configure_torch()
    cases = _cases(cfg, feature, limit)
    assert cases, f"no case with a live {feature} in {limit} seeds"
    found = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            if config is not None:
                case = case.with_compile(config=config)
            _, verdicts = check(case.with_compile(backend=f"fuzzcomp.planted:{backend}"))
            if verdicts:
                found = case
                break
        assert found is not None, f"{backend} not found on {len(cases)} cases with {feature}"
        if feature in ORACLE:
            assert any(v.oracle in ORACLE[feature] for v in verdicts), verdicts
        _, verdicts = check(found.with_compile(backend="aot_eager"))
    assert not verdicts, (found.seed, [v.detail for v in verdicts])


@pytest.mark.slow
@pytest.mark.parametrize("cfg,feature,backend,config,limit", CASES, ids=[c[2] for c in CASES])
def test_fault_needs_its_capability_not_its_neighbours(cfg, feature, backend, config, limit):
    """Cases of the same config (the same op families and reach capability) that lack this one
    feature leave the fault silent: it is the feature, not its neighbours, that triggers it."""
    configure_torch()
    config_gen = GenConfig(**cfg, reach_weights=(("gstate", 0.0),))
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(limit):
            case = generate(seed, config_gen)
            if feature in features(case):
                continue
            if config is not None:
                case = case.with_compile(config=config)
            _, verdicts = check(case.with_compile(backend=f"fuzzcomp.planted:{backend}"))
            assert not verdicts, (seed, [v.detail for v in verdicts])
            checked += 1
            if checked == 2:
                break
    assert checked == 2


@pytest.mark.slow
def test_faults_stay_silent_without_their_capability():
    """Cases without any of these capabilities never trigger their faults."""
    configure_torch()
    off = GenConfig(forms_weight=0, resample_weight=0, scatter_reduce_weight=0,
                    reach_weights=tuple((c, 0.0) for c in ("special", "constants", "scalars", "fill_softmax",
                                                           "inf_divisor", "half_divisor")))
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(20):
            case = generate(seed, off)
            for _cfg, _feature, backend, _config, _limit in CASES:
                _, verdicts = check(case.with_compile(backend=f"fuzzcomp.planted:{backend}"))
                assert not verdicts, (seed, backend, [v.detail for v in verdicts])
            checked += 1
            if checked == 3:
                break
    assert checked == 3


def test_sum_free_outputs_follow_the_lineage_back_to_the_inputs():
    """An output made only by elementwise ops from the inputs is sum-free (a sum elsewhere in
    the program cannot overflow into it, so the special rule keeps a NaN compiled made there);
    one a matmul flows into is not."""
    from fuzzcomp.generators.ir import Call, Case, CompileSpec, Input, Program, Ref, TensorType
    from fuzzcomp.run.call_extras import reach_stats, sum_free_outputs
    t = TensorType(("s0", "s0"), "float32")
    q = "torch.remainder((torch.round({0} * 8) / 8 + 0.0625), float('inf'))"
    body = (Assign("m", "torch.matmul", "torch.matmul({0}, {0})", (Ref("x"),), t),
            Assign("d", "sarg:inf_remainder", q, (Ref("x"),), t),
            Assign("e", "torch.tanh", "torch.tanh({0})", (Ref("d"),), t),
            Assign("f", "sarg:inf_remainder", q, (Ref("m"),), t))
    case = Case(Program((Input("x", t),), body, ("m", "e", "f"), ("s0",)), (Call((4,), 1),),
                CompileSpec(backend="eager"), 0, "test")
    assert sum_free_outputs(case) == ["output[1]"]
    stats = reach_stats(case, {"reduce_n": 4}, (), lambda c, g: 4)
    assert stats["special_calls"] == [0] and stats["special_sum_free"] == ["output[1]"]
