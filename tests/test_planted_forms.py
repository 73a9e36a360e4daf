"""Each generator capability is reached: a planted-fault backend that only that capability can
trigger is found on a few cases with the capability forced on (GenConfig knob), and a correct
compilation of the same cases stays silent."""
from __future__ import annotations

import warnings

import pytest

from fuzzcomp.base.config import RunConfig
from fuzzcomp.run.execute import configure_torch
from fuzzcomp.judge.check import check
from fuzzcomp.generators import GenConfig, generate
from fuzzcomp.generators.features_ops import _stmt_features, op_features
from fuzzcomp.generators.ir import Assign, CallFn, Mutate, Return, _arg_names, walk_program

# (knob, feature the case must have, planted backend)
CAPABILITIES = [
    ("forms_weight", "pool_form", "pool_form_bug"),
    ("forms_weight", "matmul_broadcast", "matmul_form_bug"),
    ("forms_weight", "dtype_view_widen", "dtype_widen_bug"),
    ("forms_weight", "out_reduction", "out_reduction_bug"),
    ("resample_weight", "interpolate_nonint_scale", "interpolate_scale_bug"),
    ("scalar_param_weight", "scalar_param_varies", "stale_scalar_param"),
    ("scatter_reduce_weight", "scatter_reduce_no_self", "scatter_no_self_bug"),
    ("inplace_view_weight", "inplace_view", "inplace_view_bug"),
    ("grad_forms_weight", "nonleaf_inplace_grad", "nonleaf_grad_bug"),
    ("grad_forms_weight", "loss_kink", "loss_kink_bug"),
    ("big_matmul_weight", "big_matmul", "big_matmul_bug"),
]


def _live_names(program) -> set[str]:
    """Names whose value may reach what the harness compares: the outputs, early returns, and
    inputs and globals (read back after the call); closed over every statement that writes them."""
    stmts = list(walk_program(program))
    live = set(program.outputs) | {i.name for i in program.inputs} | {g.name for g in program.globals}
    live |= {v for s in stmts if isinstance(s, Return) for v in s.values}
    while True:
        grown = set(live)
        for s in stmts:
            if isinstance(s, (Assign, CallFn)) and s.out in live:
                grown |= _arg_names(s.args)
            elif isinstance(s, Mutate) and s.target in live:
                grown |= _arg_names(s.args)
        if grown == live:
            return live
        live = grown


def _feature_is_live(case, feature: str) -> bool:
    """Some statement with the feature writes a value that may reach the compared results: a case
    whose only featured statement is dead code (its result unused, as the combined generator
    often emits) cannot show a fault planted in that statement."""
    live = _live_names(case.program)
    for s in walk_program(case.program):
        if not isinstance(s, (Assign, Mutate)):
            continue
        feats = _stmt_features(s.op, s.template)
        # scalar_param_varies is the case-level form of the statement's scalar_param (or a loss
        # whose margin is a Python-float parameter)
        has = feature in feats or (feature == "scalar_param_varies" and (
            "scalar_param" in feats or s.op.endswith("_loss")))
        if has and (s.out if isinstance(s, Assign) else s.target) in live:
            return True
    return False


def _cases(knob: str, feature: str, n: int, limit: int = 120):
    extra = {"scalar_param_p": 1.0} if knob == "scalar_param_weight" else {}
    cfg = GenConfig(**{knob: 30.0}, **extra)
    out = []
    for seed in range(limit):
        case = generate(seed, cfg)
        if feature in op_features(case) and _feature_is_live(case, feature):
            out.append(case)
            if len(out) == n:
                break
    return out


@pytest.mark.parametrize("knob,feature,backend", CAPABILITIES, ids=[c[2] for c in CAPABILITIES])
def test_planted_fault_found_only_through_its_capability(knob, feature, backend):
    configure_torch()
    cases = _cases(knob, feature, 4)
    assert cases, f"no case with {feature} in 120 seeds"
    found = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            _, verdicts = check(case.with_compile(backend=f"fuzzcomp.planted:{backend}"))
            found += bool(verdicts)
            if found:
                break
    assert found, f"{backend} not found on {len(cases)} cases with {feature}"
    # the same case compiled correctly (aot_eager: the graph and its joint backward, no fault) is silent
    _, verdicts = check(case.with_compile(backend="aot_eager"))
    assert not verdicts, [v.detail for v in verdicts]


def test_faults_stay_silent_without_their_capability():
    """Default-config cases that lack a capability never trigger its fault."""
    configure_torch()
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(40):
            case = generate(seed, GenConfig(forms_weight=0, resample_weight=0, scatter_reduce_weight=0))
            feats = op_features(case)
            if feats & {"pool_form", "interpolate", "scatter_reduce_no_self", "matmul_broadcast", "matmul_1d"}:
                continue
            for backend in ("pool_form_bug", "interpolate_scale_bug", "scatter_no_self_bug", "matmul_form_bug"):
                _, verdicts = check(case.with_compile(backend=f"fuzzcomp.planted:{backend}"), )
                assert not verdicts, (seed, backend, [v.detail for v in verdicts])
            checked += 1
            if checked == 3:
                break
    assert checked == 3


def test_short_campaign_finds_the_pooling_form_fault(tmp_path):
    from fuzzcomp.campaign.loop import Campaign, case_seed
    cfg = RunConfig(out=str(tmp_path / "c"), cases=8, jobs=1, backend="fuzzcomp.planted:pool_form_bug",
                    minimize=False, generator={"forms_weight": 60.0})
    # the campaign's own cases must hold a pooling form whose result is used, else there is
    # nothing to find (the combined generator emits its first one at case 6)
    gen = GenConfig.for_device(cfg.device, mode=cfg.mode, **dict(cfg.generator))
    assert any(_feature_is_live(generate(case_seed(cfg.seed, i), gen), "pool_form") for i in range(cfg.cases))
    summary = Campaign(cfg).run()
    assert summary["findings"] >= 1, summary


def test_for_device_turns_big_matmuls_on_only_for_autotune_modes():
    assert GenConfig.for_device("cpu").big_matmul_weight == 0.0
    assert GenConfig.for_device("cuda").big_matmul_weight == 0.0
    assert GenConfig.for_device("cuda", mode="max-autotune").big_matmul_weight == 1.0
    assert GenConfig.for_device("cuda", mode="max-autotune-no-cudagraphs").big_matmul_weight == 1.0
    assert 0 < GenConfig.for_device("cpu", mode="max-autotune").big_matmul_weight < 0.1


def test_half_rounding_flag_reaches_the_worker_options(tmp_path, monkeypatch):
    from fuzzcomp.campaign import loop as campaign_mod
    from fuzzcomp.cli.parser import build_parser
    from fuzzcomp.cli.commands import run_config
    from fuzzcomp.base.config import ConfigError, validate
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["run", "--cases", "1", "--half-rounding", "strict", "--out", "c"])
    cfg, _ = run_config(args)
    assert cfg.half_rounding == "strict"
    cfg0, _ = run_config(build_parser().parse_args(["run", "--cases", "1", "--out", "d"]))
    assert cfg0.half_rounding == "fp64"
    with pytest.raises(ConfigError):
        validate(RunConfig(out=str(tmp_path / "e"), cases=1, half_rounding="loose"))
    seen = {}

    class Stop(Exception):
        pass

    def fake_workers(self, n, settings):
        seen["strict"] = settings.strict_precision
        raise Stop
    c = campaign_mod.Campaign(cfg)
    monkeypatch.setattr(type(campaign_mod.make_engine(cfg, log=lambda *a, **k: None)), "workers", fake_workers)
    with pytest.raises(Stop):
        c.run()
    assert seen["strict"] is True
