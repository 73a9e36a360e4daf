"""Program structure and call schedules: determinism, feature coverage, validity, oracle silence,
reduction and repros on programs with control flow, modules, globals and call state."""
from __future__ import annotations

import collections
import subprocess
import sys
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzcomp.generators import emit, from_jsonable, generate, generate_from_choices, to_jsonable
from fuzzcomp.generators.build import generate_from_stream
from fuzzcomp.generators.choices import ChoiceStream
from fuzzcomp.generators.features import FEATURES, features
from fuzzcomp.generators.ir import Loop, While, walk_program
from fuzzcomp.generators.strategies import DrawStream, cases

warnings.filterwarnings("ignore")


def test_same_seed_same_source_across_features():
    seen = set()
    for seed in range(250):
        ch = ChoiceStream(seed=seed)
        a = generate_from_stream(ch, seed)
        b = generate(seed)
        assert a == b and emit(a.program) == emit(b.program)
        assert from_jsonable(to_jsonable(a)) == a
        assert generate_from_choices(ch.record, seed) == a  # the recorded choices replay exactly
        seen |= features(a)
    assert len(seen) >= len(FEATURES) - 8  # determinism was checked on structured programs


def test_every_feature_appears_over_seeds():
    count = collections.Counter()
    for seed in range(800):
        case = generate(seed)
        count.update(features(case))
        compile(emit(case.program), f"<seed {seed}>", "exec")
    off_by_default = {"big_matmul"}  # GenConfig.big_matmul_weight is 0 outside the max-autotune modes
    missing = [f for f in FEATURES if count[f] == 0 and f not in off_by_default]
    assert not missing, f"features never generated: {missing}"


def _aot_eager_verdicts(seeds):
    from fuzzcomp.run.execute import configure_torch
    from fuzzcomp.judge.check import check
    configure_torch()
    bad = {}
    from test_oracles_baseline import known_real
    for seed in seeds:
        case = generate(seed).with_compile(backend="aot_eager")
        obs, verdicts = check(case)
        verdicts = [v for v in verdicts if not known_real(v, case)]  # real bugs, each with its repro
        if verdicts:
            bad[seed] = [(v.symptom, v.detail[:120]) for v in verdicts[:2]]
    return bad


def test_aot_eager_silent_on_structured_programs():
    seeds = [s for s in range(200) if features(generate(s)) & {"module", "torch_cond", "autocast",
                                                                 "helper_call", "while_size"}][:4]
    assert _aot_eager_verdicts(seeds) == {}


def test_call_state_applied_by_runtime():
    import torch

    from fuzzcomp.run.runtime import make_inputs, run_call
    specs = [("x0", ("s0", 3), "float32", "contiguous"), ("x1", ("s0", 3), "float32", "contiguous"),
             ("x2", ("s0", 3), "float32", "transposed", {"kind": "alias", "of": 0, "view": "transposed"}),
             ("x3", ("s0",), "float32", "contiguous", {"kind": "dict", "count": 2}),
             ("x4", (), "int64", "contiguous", {"kind": "int"})]
    extra = {"scalars": (("x4", 3),), "requires_grad": ("x1",), "marks": (("x0", 0, "maybe"),)}
    a = make_inputs(specs, {"s0": 4}, 7, call_extra=extra)
    assert a[1].requires_grad and not a[0].requires_grad
    assert a[2].data_ptr() == a[0].data_ptr() and a[2].shape == (3, 4)
    assert sorted(a[3]) == ["k0", "k1"] and a[4] == 3
    b = make_inputs(specs, {"s0": 4}, 7, call_extra={"inference_inputs": True, "scalars": (("x4", 1),)})
    assert b[0].is_inference()
    out = run_call(lambda *xs: torch.is_grad_enabled(), a, [s[0] for s in specs], 0, grad_mode="no_grad")
    assert out.values[0] is False


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_property_cases_emit_and_round_trip(case):
    compile(emit(case.program), "<hypothesis case>", "exec")
    assert from_jsonable(to_jsonable(case)) == case
    assert all(len(c.sizes) == len(case.program.symbols) for c in case.calls)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_property_draw_stream_replays(data):
    ch = DrawStream(data.draw)
    case = generate_from_stream(ch)
    assert emit(generate_from_choices(ch.record).program) == emit(case.program)


def _planted_case():
    """A module program with a loop on which the perturb_add planted fault shows."""
    from fuzzcomp.run.execute import configure_torch
    from fuzzcomp.judge.check import check
    from fuzzcomp.findings.triage import bucket_of
    configure_torch()
    for seed in range(200):
        case = generate(seed)
        p = case.program
        if not (p.module and any(isinstance(s, (Loop, While)) for s in walk_program(p))):
            continue
        case = case.with_compile(backend="fuzzcomp.planted:perturb_add")
        _obs, verdicts = check(case)
        if verdicts:
            return case, bucket_of(verdicts[0])
    raise AssertionError("no module+loop program shows the planted fault in 200 seeds")


def test_minimise_shrinks_planted_fault_on_structured_program():
    from fuzzcomp.judge.check import check
    from fuzzcomp.reduce.minimise import minimise
    from fuzzcomp.reduce.passes import size_of
    from fuzzcomp.findings.triage import bucket_of
    case, key = _planted_case()

    def interesting(c):
        obs, verdicts = check(c)
        return obs.eager_valid and key in {bucket_of(v) for v in verdicts}

    small, stats = minimise(case, interesting, budget_s=60)
    assert interesting(small)
    assert size_of(small)[0] < size_of(case)[0] // 2, (size_of(case), size_of(small), stats.per_pass)
    n_before = sum(1 for _ in walk_program(case.program))
    n_after = sum(1 for _ in walk_program(small.program))
    assert n_after < n_before


@pytest.mark.slow
def test_repro_of_structured_program_reproduces(tmp_path):
    from fuzzcomp.run.execute import configure_torch
    from fuzzcomp.judge.check import check
    from fuzzcomp.render.repro import render_repro
    from fuzzcomp.findings.triage import bucket_of
    configure_torch()
    for seed in range(300):
        case = generate(seed)
        f = features(case)
        if not ({"module", "closure_global_tensor"} <= f or {"module", "scalar_int_arg"} <= f):
            continue
        case = case.with_compile(backend="fuzzcomp.planted:perturb_add")
        _obs, verdicts = check(case)
        if verdicts:
            break
    else:
        raise AssertionError("no planted finding on a module program with globals/scalars")
    key = bucket_of(verdicts[0])
    bug = tmp_path / "repro_bug.py"
    bug.write_text(render_repro(case, key, verdicts[0].detail))
    ok = tmp_path / "repro_ok.py"
    ok.write_text(render_repro(case.with_compile(backend="eager"), key, verdicts[0].detail))
    r1 = subprocess.run([sys.executable, str(bug)], capture_output=True, text=True, timeout=300)
    r2 = subprocess.run([sys.executable, str(ok)], capture_output=True, text=True, timeout=300)
    assert r1.returncode == 1, r1.stdout + r1.stderr[-2000:]
    assert r2.returncode == 0, r2.stdout + r2.stderr[-2000:]


def test_cond_operands_never_share_storage():
    """torch.cond rejects aliased operands under grad mode by design (#153832); eager takes a
    branch without that check only while the predicate is a plain bool, so a program passing
    ``(x, x)`` or ``(x, x.permute(...))`` filed a false crash once the predicate turned symbolic
    (H200 seed 1501, runtime-crash-capture-2151769e)."""
    from fuzzcomp.generators.ir import Assign, CondOp, walk
    from fuzzcomp.generators.ops_view import VIEW
    views = {s.name for s in VIEW if s.family == "view"}
    seen = 0
    for seed in range(1500):
        p = generate(seed).program
        root = {i.name: (i.alias_of if i.kind == "alias" else i.name) for i in p.inputs}
        for s in walk(p.body):
            if isinstance(s, Assign):
                first = next((a.name for a in s.args[:1] if hasattr(a, "name")), None)
                root[s.out] = root.get(first, first) if s.op in views and first else s.out
            elif isinstance(s, CondOp) and len(s.operands) > 1:
                seen += 1
                roots = [root.get(n, n) for n in s.operands]
                assert len(set(roots)) == len(roots), (seed, s.operands, roots)
    assert seen >= 5  # two-operand conds are still drawn
