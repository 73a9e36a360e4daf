"""Bucket identity by root cause: the ladder's stage, a culprit op for silent mismatches, guard
reasons for recompiles (stride-only and automatic-dynamic ones are notes, not bugs)."""
import pytest

from fuzzcomp.attribute.culprit import cheap_culprit, intermediates_variant
from fuzzcomp.run.execute import ExecOptions, configure_torch
from fuzzcomp.judge.check import check
from fuzzcomp.attribute.ladder import rungs_for
from fuzzcomp.oracles.judge import classify_replay, judge_recompiles, recompile_notes
from fuzzcomp.oracles import Verdict
from fuzzcomp.findings.triage import bucket_of

from fuzzcomp.generators.ir import Assign, Input, Program, Ref
from oracle_cases import SQ, case, mul_relu, mutate_input

configure_torch()


# ---- the ladder -----------------------------------------------------------------------------
def _stages(c):
    rungs, final = rungs_for(c)
    return [(b, m) for b, m, _ in rungs], final


def test_ladder_rungs_cheapest_first_with_a_cudagraph_rung_on_gpus():
    ind = case(mul_relu(), "inductor")
    cheap = [("eager", None), ("aot_eager", None), ("aot_eager_decomp_partition", None)]
    assert _stages(ind) == (cheap, "inductor")
    ro = ind.with_compile(mode="reduce-overhead", device="cuda")
    assert _stages(ro) == (cheap + [("inductor", None)], "cudagraphs")
    ma = ind.with_compile(mode="max-autotune", device="cuda")
    assert _stages(ma) == (cheap + [("inductor", "max-autotune-no-cudagraphs")], "cudagraphs")
    assert _stages(ind.with_compile(mode="reduce-overhead"))[1] == "inductor"   # no CUDA graphs on CPU
    assert _stages(case(mul_relu(), "aot_eager")) == (cheap[:1], "autograd")
    assert _stages(case(mul_relu(), "eager")) == ([], "capture")
    assert _stages(case(mul_relu(), "my.mod:backend")) == (cheap[:2], "backend")


def test_the_ladder_places_the_primary_output_not_another_that_diverges_earlier():
    """CPU 1512 8edf381d: output[3] diverged under inductor only, output[4] already under
    aot_eager. The ladder must place output[3] (the primary, which names the bucket) at inductor,
    not take output[4]'s autograd stage for it; a crash still matches by its signature alone."""
    from fuzzcomp.attribute.ladder import attribute, same_divergence
    from fuzzcomp.oracles import Observation
    three = Verdict("numeric", "unknown", "fp64", "output[3] differs", 0, "output[3]")
    four = Verdict("numeric", "unknown", "fp64", "output[4] differs", 0, "output[4]")
    seen = {"eager": [], "aot_eager": [four], "aot_eager_decomp_partition": [four], "inductor": [three, four]}

    def fake_check(c, options):
        return None, seen[c.compile.backend]
    opts = ExecOptions(ladder=True, culprit=False)
    got = attribute(case(mul_relu(), "inductor"), Observation("inductor", []), [three, four], opts, fake_check)
    assert [(v.label, v.stage) for v in got] == [("output[3]", "inductor"), ("output[4]", "inductor")]
    assert same_divergence(three, three) and not same_divergence(three, four)
    crash = Verdict("runtime-crash", "unknown", "crash", "boom", 0, "call", "RuntimeError: x")
    assert same_divergence(crash, Verdict("runtime-crash", "unknown", "crash", "boom", 1, "other", "RuntimeError: x"))


def test_stage_is_the_ladder_answer_for_every_symptom():
    # a custom backend's fault: eager and aot_eager are clean, so the backend is the stage
    obs, verdicts = check(case(mul_relu(), "fuzzcomp.planted:wrong_gradient"))
    assert verdicts and {v.stage for v in verdicts} == {"backend"}
    assert obs.stats["ladder"]["rungs"] == {"eager": [], "aot_eager": []}
    # a crash the eager rung already shows (recompile limit: capture), never "unknown"/"runtime"
    import torch._dynamo.config as dc
    name = "recompile_limit" if hasattr(dc, "recompile_limit") else "cache_size_limit"
    with dc.patch({name: 1}):
        _, verdicts = check(case(mul_relu(), "aot_eager", sizes=((3,), (4,), (5,)), dynamic=False))
    assert verdicts and all(v.stage == "capture" for v in verdicts if v.symptom == "recompile")
    _, verdicts = check(case(mul_relu(), "fuzzcomp.planted:runtime_crash", sizes=((4,), (4,))))
    assert [(v.symptom, v.stage) for v in verdicts] == [("runtime-crash", "backend")]


@pytest.mark.slow
def test_real_inductor_fault_is_stage_inductor():
    import torch._inductor.config as cfg
    with cfg.patch({"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}):
        _, verdicts = check(case(mul_relu(), "inductor", sizes=((4,),)))
    assert verdicts and {v.stage for v in verdicts if v.symptom == "numeric"} == {"inductor"}


# ---- culprit ops split silent mismatches ----------------------------------------------------
def test_first_diverging_op_splits_numeric_buckets():
    keys = {}
    for backend, op in (("fuzzcomp.planted:perturb_mul", "mul"), ("fuzzcomp.planted:perturb_add", "add")):
        obs, verdicts = check(case(mul_relu(), backend, sizes=((4,),)), ExecOptions(ladder=False))
        numeric = [v for v in verdicts if v.symptom == "numeric"]
        assert numeric and numeric[0].signature == f"culprit op: {op}", numeric
        keys[op] = bucket_of(numeric[0])
    assert keys["mul"] != keys["add"]
    assert keys["mul"].signature == "output values | culprit op: mul"
    # add writes the output: judged in program order with the intermediates, it is the first to diverge
    assert obs.stats["culprit"] == "first diverging intermediate"


def test_culprit_of_the_primary_verdict_survives_the_ladder():
    obs, verdicts = check(case(mul_relu(), "fuzzcomp.planted:perturb_mul", sizes=((4,),)))
    numeric = [v for v in verdicts if v.symptom == "numeric"]
    assert numeric[0].signature == "culprit op: mul" and numeric[0].stage == "backend"
    assert obs.stats["culprit"] == "first diverging intermediate"


def test_correct_backend_stays_silent_with_the_variant():
    _, verdicts = check(case(mul_relu(), "aot_eager", sizes=((4,),)))
    assert not verdicts


def test_cheap_culprit_names_the_writer_or_reader():
    p = mul_relu()
    assert cheap_culprit(p, "output[0]") == "add"
    assert cheap_culprit(p, "grad of input y") == "mul"
    assert cheap_culprit(mutate_input(), "input x after call") == "mul_"
    variant, extra = intermediates_variant(p)
    # each value read right after its statement, under a fresh name (a later statement may rebind it)
    assert variant.outputs[:2] == ("w", "x") and len(variant.outputs) == 5
    assert [s.op for s in extra] == ["mul", "relu", "add"]


def test_a_gradient_s_culprit_is_the_first_live_reader_of_the_input_or_its_views():
    """CPU 1602, gradient-inductor-17e454aa: amax's NaN gradient of x1 was filed under a dead
    ``atan2(x1, x1)`` in a loop (its result unused), the first statement that names x1. The
    culprit is the first statement whose value is used and that reads x1 or x2, a view of it."""
    import pathlib
    from fuzzcomp.findings.store import load_finding
    from fuzzcomp.generators.ir import walk
    d = load_finding(pathlib.Path(__file__).parent / "data" / "cpu1602_amax_grad_dead_atan2.json")
    p = d["case_obj"].program
    assert d["verdict_objs"][0].signature == "culprit op: torch.atan2"  # what the campaign said
    first = next(s for s in walk(p.body) if isinstance(s, Assign) and "x1" in {getattr(a, "name", "") for a in s.args})
    assert first.op == "torch.atan2"
    assert cheap_culprit(p, "grad of input x1") == "torch.cosh"          # v1 = cosh(x2), read by the outputs
    assert cheap_culprit(p, "grad of input x3") == "Tensor.mul"              # v12 = v10.unsqueeze(-1) * x3


def test_cheap_culprit_reads_a_dict_output_by_its_key():
    """H200 seed 1504: output['o3'] fell back to output 0, whose writer (torch.neg) then named a
    remainder bug, one root cause in two buckets."""
    from dataclasses import replace as _replace
    p = _replace(mul_relu(), outputs=("x", "w"), out_kind="dict")
    assert cheap_culprit(p, "output['o1']") == "add"
    assert cheap_culprit(p, "output['o0']") == ""      # an input returned as it is: no writer


def _inf_remainder_then_mul():
    """v = remainder(x, inf); y = v * 2: the planted inf-divisor fault makes v NaN where eager
    keeps x; only a class check of the intermediates sees that remainder changed first."""
    return Program((Input("x", SQ),),
                   (Assign("v", "torch.remainder", "torch.remainder({}, float('inf'))", (Ref("x"),), SQ),
                    Assign("y", "torch.mul", "torch.mul({}, 2.0)", (Ref("v"),), SQ)),
                   ("y",), ("s0",))


@pytest.mark.slow
def test_a_special_value_changing_class_names_its_first_op():
    obs, verdicts = check(case(_inf_remainder_then_mul(), "fuzzcomp.planted:inf_divisor_bug", sizes=((3,),)),
                          ExecOptions(ladder=False))
    values = [v for v in verdicts if v.symptom == "numeric"]
    assert values and values[0].signature.endswith("culprit op: torch.remainder"), values
    assert obs.stats["culprit"] == "first diverging intermediate"


def test_mutation_culprit_falls_back_gracefully():
    _, verdicts = check(case(mutate_input("transposed"), "fuzzcomp.planted:drop_mutation_noncontiguous"),
                        ExecOptions(ladder=False))
    m = [v for v in verdicts if v.symptom == "mutation"]
    assert m and m[0].signature == "culprit op: mul_", m


# ---- recompiles: the failed guard, automatic dynamic, stride-only --------------------------
SIZE = "0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4"
STRIDE = "0/0: tensor 'x' stride mismatch at index 0. expected 4, actual 1"
OBJ = "0/1: ___check_obj_id(L['g'], 140234)"


def test_replay_classification():
    assert classify_replay([STRIDE], None) == classify_replay([STRIDE], False) == "stride"
    assert classify_replay([SIZE], None) == "automatic-dynamic"
    assert classify_replay([SIZE], False) == classify_replay([SIZE], True) == "bug"
    assert classify_replay([OBJ], None) == classify_replay([], None) == "bug"


def test_recompile_verdicts_name_the_guard_and_skip_notes():
    stats = {"replay_graphs_per_call": [0, 1], "replay_reasons": [[], [OBJ]], "dynamic": None}
    (v,) = judge_recompiles(stats)
    assert v.call == 1 and "___check_obj_id" in v.signature and "140234" not in v.signature
    assert "guard failures" in v.detail
    other = judge_recompiles({**stats, "replay_reasons": [[], ["0/3: ___check_obj_id(L['h'], 99)"]]})
    assert other[0].signature == v.signature
    for reasons, word in (([STRIDE], "strides only"), ([SIZE], "automatic dynamic")):
        quiet = {**stats, "replay_reasons": [[], reasons]}
        assert judge_recompiles(quiet) == [] and word in recompile_notes(quiet)[0]
    assert judge_recompiles({**stats, "replay_reasons": [[], [SIZE]], "dynamic": False})


def test_a_replay_compile_that_a_second_replay_does_not_repeat_is_a_note():
    """CPU 1509: a graph break inside a module's forward made Dynamo break the caller at the call
    site; on replay the newer, more general cache entry sent the first call into a frame not yet
    run at its size: one compile, then none on a second replay, outputs right. A one-off is a
    note; a call that compiles on every replay (an identity guard on a fresh tensor) stays a bug."""
    stats = {"replay_graphs_per_call": [0, 1], "replay_reasons": [[], [OBJ]], "dynamic": True}
    assert judge_recompiles({**stats, "replay2_graphs_per_call": [0, 1]})            # every time: a bug
    assert judge_recompiles(stats)                                                   # no second replay run
    once = {**stats, "replay2_graphs_per_call": [0, 0]}
    assert judge_recompiles(once) == [] and "second replay compiled nothing" in recompile_notes(once)[0]


def test_replay_reasons_are_captured_per_call():
    obs, verdicts = check(case(mul_relu(), "fuzzcomp.planted:forget_graphs"), ExecOptions(ladder=False))
    assert "replay_reasons" in obs.stats and len(obs.stats["replay_reasons"]) == 2
    assert any(v.symptom == "recompile" for v in verdicts)


def test_value_bucket_keys_carry_the_culprit():
    a = Verdict("numeric", "inductor", "fp64-rule", "output[0]: rmse", 0, "output[0]", "culprit op: torch.mul")
    b = Verdict("numeric", "inductor", "fp64-rule", "output[0]: rmse", 0, "output[0]", "culprit op: torch.add")
    assert bucket_of(a) != bucket_of(b)
    assert bucket_of(a) == bucket_of(Verdict("numeric", "inductor", "fp64-rule", "output[1]: max", 2,
                                             "output[1]", "culprit op: torch.mul"))


def test_a_torch_global_left_wrong_is_the_identity_of_the_values_after_it():
    """A program that sets the default dtype: compiled leaves the global wrong and, because of
    it, an output of another dtype. One fix closes both, so the case buckets on the global (a
    30-minute campaign filed the dtype as its own 'numeric / output dtype' bucket)."""
    from fuzzcomp.oracles.verdict import primary
    dtype = Verdict("numeric", "autograd", "fp64-rule", "output[1]: dtype: eager torch.float32 compiled "
                    "torch.float64", 0, "output[1]", "culprit op: torch.sigmoid")
    glob = Verdict("mutation", "autograd", "fp64-rule", "state torch globals after call: eager='grad=True "
                   "deterministic=False warn_only=False default_dtype=torch.float64' compiled='grad=True "
                   "deterministic=False warn_only=False default_dtype=torch.float32'", 0,
                   "state torch globals after call")
    assert primary([dtype, glob]) is glob
    assert bucket_of(primary([dtype, glob])).signature == "torch globals: default_dtype"
    assert primary([dtype]) is dtype  # without a global in play, the value is the identity


# ---- one fault, one bucket: guards, loop carries and spellings all name the faulty op -------------
def _guarded_sqrt():
    """v = sqrt(|x| + 0.25); w = v * 2: the add sits inside sqrt's domain guard."""
    return Program((Input("x", SQ),),
                   (Assign("v", "torch.sqrt", "torch.sqrt(torch.abs({0}) + 0.25)", (Ref("x"),), SQ),
                    Assign("w", "torch.mul", "torch.mul({0}, 2.0)", (Ref("v"),), SQ)), ("w",), ("s0",))


def _carried_loop():
    """c = x.clone(); for _ in range(2): c = c * 0.5 + tanh(x) * 0.5; w = sin(c)."""
    from fuzzcomp.generators.ir import Loop
    body = (Assign("c", "loop:carry", "{0} * 0.5 + torch.tanh({1}) * 0.5", (Ref("c"), Ref("x")), SQ),)
    return Program((Input("x", SQ),),
                   (Assign("c", "loop:init", "{0}.clone()", (Ref("x"),), SQ),
                    Loop("i", "range", 2, (), body, (("c", SQ),)),
                    Assign("w", "torch.sin", "torch.sin({0})", (Ref("c"),), SQ)), ("w",), ("s0",))


def _helper_call():
    """h0(v0) = sigmoid(xlogy(v0, |v0| + 1)); w = h0(x).expand_as(x)."""
    from fuzzcomp.generators.ir import CallFn, Function
    h = Function("h0", (("v0", SQ),),
                 (Assign("v1", "torch.xlogy", "torch.xlogy({0}, torch.abs({0}) + 1)", (Ref("v0"),), SQ),
                  Assign("v2", "torch.sigmoid", "torch.sigmoid({0})", (Ref("v1"),), SQ)), "v2")
    return Program((Input("x", SQ),),
                   (CallFn("v5", "h0", (Ref("x"),), SQ),
                    Assign("w", "Tensor.expand_as", "{0}.expand_as({1})", (Ref("v5"), Ref("x")), SQ)),
                   ("w",), ("s0",), helpers=(h,))


@pytest.mark.parametrize("program", [_guarded_sqrt, _carried_loop, _helper_call], ids=["guard", "loop", "helper"])
def test_fault_inside_a_guard_or_a_loop_names_add(program):
    _, verdicts = check(case(program(), "fuzzcomp.planted:perturb_add", sizes=((4,),)), ExecOptions(ladder=False))
    numeric = [v for v in verdicts if v.symptom == "numeric"]
    assert numeric and numeric[0].signature == "culprit op: torch.add", numeric
    _, clean = check(case(program(), "aot_eager", sizes=((4,),)), ExecOptions(ladder=False))
    assert not clean


def test_a_fault_in_the_guarded_op_itself_still_names_it():
    _, verdicts = check(case(_guarded_sqrt(), "fuzzcomp.planted:perturb_mul", sizes=((4,),)), ExecOptions(ladder=False))
    numeric = [v for v in verdicts if v.symptom == "numeric"]
    assert numeric and numeric[0].signature == "culprit op: torch.mul", numeric


def test_spellings_of_one_op_share_a_name():
    from fuzzcomp.attribute.culprit import canonical
    assert {canonical(n) for n in ("torch.add", "Tensor.__add__", "Tensor.add_", "scalar:add",
                                   "Tensor.__iadd__", "Tensor.add")} == {"torch.add"}
    assert canonical("Tensor.mul_", inplace=True) == "Tensor.mul_" and canonical("mul_", inplace=True) == "mul_"
    # full names stay whole: the known-bug registry matches "culprit op: torch\.nn\.functional\.avg_pool"
    assert canonical("torch.nn.functional.avg_pool1d") == "torch.nn.functional.avg_pool1d"
    assert canonical("Tensor.expand_as") == "Tensor.expand_as" and canonical("mul") == "mul"
