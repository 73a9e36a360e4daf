"""The recompile oracle's bound and its functional twins, without compiling: the bound's call
key, each twin's edit of the case, the out-of-place rewrite, the cause the twins name from
their probes' answers, and the bucket identity that cause gives."""
from __future__ import annotations

import dataclasses

from fuzzcomp.attribute import twins
from fuzzcomp.attribute.outofplace import out_of_place
from fuzzcomp.findings.triage import bucket_of
from fuzzcomp.generators.emit import emit
from fuzzcomp.generators.ir import (Assign, Call, Case, CompileSpec, Global, Input, ModuleDef, Mutate,
                                    Program, Ref, StateTensor, TensorType)
from fuzzcomp.oracles import Observation, Verdict
from fuzzcomp.run.recompiles import max_compile_events

T = TensorType(("s0",), "float32")


def _program(*body, inputs=("x",), **kw) -> Program:
    return Program(tuple(Input(n, T) for n in inputs),
                   body + (Assign("out", "torch.sin", "torch.sin({0})", (Ref("x"),), T),), ("out",), ("s0",), **kw)


def _case(calls, program=None) -> Case:
    return Case(program or _program(), tuple(calls), CompileSpec(backend="eager"), 0, "test")


def test_bound_counts_inference_inputs_as_a_call_of_its_own():
    # Dynamo's tensor guard compares dispatch keys: an inference tensor lacks ADInplaceOrView,
    # so a call differing only in how its inputs were made may compile once more
    inf = dict(grad_mode="inference")
    same = _case([Call((4,), 1, **inf), Call((4,), 2, **inf), Call((4,), 3, **inf)])
    assert max_compile_events(same) == 1
    mixed = _case([Call((4,), 1, **inf), Call((4,), 2, inference_inputs=True, **inf),
                   Call((4,), 3, **inf), Call((4,), 4, inference_inputs=True, **inf)])
    assert max_compile_events(mixed) == 2


def test_each_twin_removes_its_feature_and_applies_only_where_the_case_has_it():
    calls = [Call((4,), 1, scalars=(("n", 1),), globals=(("G0", 1.0),), grad_mode="inference",
                  inference_inputs=True, requires_grad=(), marks=(("x", 0, "maybe"),), caller=("autocast",)),
             Call((4,), 2, scalars=(("n", 2),), globals=(("G0", 2.0),), grad_mode="no_grad",
                  requires_grad=("x",), marks=(("x", 0, "maybe"),))]
    case = _case(calls)
    made = {name: make(case) for name, _, make in twins.TWINS}
    assert not any(c.inference_inputs for c in made["inference-inputs"].calls)
    assert [c.grad_mode for c in made["inference-inputs"].calls] == ["inference", "no_grad"]
    assert {c.requires_grad for c in made["requires-grad"].calls} == {()}
    assert all(c.marks == () for c in made["marks"].calls)
    assert {c.scalars for c in made["scalars"].calls} == {(("n", 1),)}
    assert {(c.globals, c.caller) for c in made["globals"].calls} == {((("G0", 1.0),), ())}
    assert {(c.grad_mode, c.inference_inputs) for c in made["grad-mode"].calls} == {("grad", False)}
    assert made["in-place"] == case  # no write: the in-place twin does not apply
    for name, twin in made.items():  # a twin changes its own feature and nothing else
        for a, b in zip(case.calls, twin.calls):
            changed = {f.name for f in dataclasses.fields(Call) if getattr(a, f.name) != getattr(b, f.name)}
            allowed = {"inference-inputs": {"inference_inputs"}, "requires-grad": {"requires_grad"},
                       "marks": {"marks"}, "scalars": {"scalars"}, "globals": {"globals", "caller"},
                       "grad-mode": {"grad_mode", "inference_inputs"}, "in-place": set()}[name]
            assert changed <= allowed, (name, changed)
    plain = _case([Call((4,), 1), Call((5,), 2)])
    assert all(make(plain) == plain for _, _, make in twins.TWINS)


def test_globals_twin_drops_the_programs_writes_of_torch_state():
    body = (Mutate("", "state:set_grad_enabled", "torch.set_grad_enabled(False)", ()),)
    case = _case([Call((4,), 1)], _program(*body))
    assert "set_grad_enabled" not in emit({n: make for n, _, make in twins.TWINS}["globals"](case).program)


def test_out_of_place_rewrites_each_kind_of_write():
    prog = Program(
        (Input("x", T), Input("y", T)),
        (Mutate("x", "Tensor.add_", "{0}.add_({1})", (Ref("x"), Ref("y"))),
         Mutate("y", "Tensor.zero_", "{0}.transpose(-1, -2).zero_()", (Ref("y"),)),
         Mutate("x", "Tensor.abs_", "{0}.abs_().add_(0.25).sqrt_()", (Ref("x"),)),
         Mutate("x", "torch.exp[out]", "torch.exp({1}, out={0})", (Ref("x"), Ref("y"))),
         Mutate("self.buf0", "buffer:running_mean", "{0}.mul_(0.9).add_({1}.mean())", (Ref("self.buf0"), Ref("x"))),
         Mutate("G1", "Tensor.mul_", "{0}.mul_(2)", (Ref("G1"),)),
         Mutate("", "state:set_grad_enabled", "torch.set_grad_enabled(False)", ()),
         Assign("out", "torch.sin", "torch.sin({0})", (Ref("x"),), T)),
        ("out",), ("s0",), globals=(Global("G1", "tensor", T),),
        module=ModuleDef("Model", (StateTensor("buf0", T, "buffer"),)))
    lines = [ln.strip() for ln in emit(out_of_place(prog)).splitlines()]
    assert "x = x.add(y)" in lines                        # one method call: its out-of-place form
    assert lines.index("y = y.clone()") + 1 == lines.index("y.transpose(-1, -2).zero_()")  # through a view
    assert "x = x.clone()" in lines and "x.abs_().add_(0.25).sqrt_()" in lines             # a chain
    assert "torch.exp(y, out=x)" in lines                 # out=: into the copy
    assert "_twin5 = self.buf0.clone()" in lines and "_twin5.mul_(0.9).add_(x.mean())" in lines
    assert "_twin6 = G1.clone()" in lines and "G1 = G1.clone()" not in lines  # a global is never rebound
    assert "torch.set_grad_enabled(False)" in lines       # not a tensor write: the globals twin's
    assert out_of_place(_program()) is None


def _probe(recompiles_unless):
    """A probe whose twin stops recompiling when ``recompiles_unless(twin)`` holds."""
    def probe(twin):
        ok = recompiles_unless(twin)
        if ok is None:
            return None  # the twin's compiled run raised
        return {"graphs_per_call": [1, 0], "replay_graphs_per_call": [0, 0 if ok else 1],
                "replay_reasons": [[], [] if ok else ["0/0: ___check_obj_id(L['x'], 1)"]], "dynamic": None,
                "compile_events": 1, "max_compile_events": 1}
    return probe


REPLAY = {"replay compiled again"}
RICH = _case([Call((4,), 1, grad_mode="inference", inference_inputs=True, globals=(("G0", 1.0),)),
              Call((4,), 2, grad_mode="inference", globals=(("G0", 2.0),))],
             _program(Mutate("x", "Tensor.add_", "{0}.add_(1)", (Ref("x"),))))


def test_the_first_twin_that_stops_the_recompile_is_the_cause():
    no_inf = lambda t: not any(c.inference_inputs for c in t.calls)  # noqa: E731
    cause, seen = twins.twin_runs(RICH, REPLAY, _probe(no_inf))
    assert cause == "inference-inputs" and seen == {"inference-inputs": "stops"}
    no_write = lambda t: not any(isinstance(s, Mutate) for s in t.program.body)  # noqa: E731
    cause, seen = twins.twin_runs(RICH, REPLAY, _probe(no_write))
    assert cause == "in-place"
    assert seen == {"inference-inputs": "recompiles", "globals": "recompiles", "grad-mode": "recompiles",
                    "in-place": "stops"}


def test_no_single_twin_stopping_it_gives_combined_or_program():
    def both(t):
        return not any(c.inference_inputs for c in t.calls) and len({c.globals for c in t.calls}) == 1
    cause, seen = twins.twin_runs(RICH, REPLAY, _probe(both))
    assert cause == "combined:inference-inputs+globals+grad-mode+in-place" and seen["combined"] == "stops"
    cause, seen = twins.twin_runs(RICH, REPLAY, _probe(lambda t: False))
    assert cause == "program" and seen["combined"] == "recompiles"
    # a twin whose compiled run raised says nothing: the next one decides
    raised = lambda t: None if not any(c.inference_inputs for c in t.calls) and t.calls[0].grad_mode != "grad" \
        else not any(c.inference_inputs for c in t.calls)  # noqa: E731
    cause, seen = twins.twin_runs(RICH, REPLAY, _probe(raised))
    assert seen["inference-inputs"] == "raised" and cause == "grad-mode"


def _verdict(reason: str) -> Verdict:
    return Verdict("recompile", "capture", "recompile", "replaying the schedule compiled again at calls [1]", 1,
                   "", f"recompile: replay compiled again: {reason}")


def test_the_cause_is_the_bucket_identity():
    grad, keys = _verdict("GLOBAL_STATE changed: grad_mode"), _verdict("tensor 'V' dispatch key set mismatch")
    # one cause seen through two cache entries' reasons: one bucket
    assert bucket_of(_with(grad, "inference-inputs")) == bucket_of(_with(keys, "inference-inputs"))
    # two causes behind the same reason: two buckets
    assert bucket_of(_with(grad, "inference-inputs")) != bucket_of(_with(grad, "in-place"))
    # nothing removable: the reason stays the identity
    assert bucket_of(_with(grad, "program")) != bucket_of(_with(keys, "program"))
    assert _with(grad, "program").signature.startswith("recompile: replay compiled again: GLOBAL_STATE")


def _with(v: Verdict, cause: str) -> Verdict:
    obs = Observation("eager", [], {"grad_inputs": []}, {})
    plain = _case([Call((4,), 1), Call((4,), 2, caller=("autocast",))])
    fixed = lambda t: False  # noqa: E731
    if cause in ("inference-inputs", "in-place"):  # the twin only the cause's case has
        plain = RICH
        fixed = {"inference-inputs": lambda t: not t.calls[0].inference_inputs,
                 "in-place": lambda t: not any(isinstance(s, Mutate) for s in t.program.body)}[cause]
    probe = _probe(fixed)
    out = twins.name_cause(plain, obs, [v], lambda twin, grads: probe(twin))
    assert obs.stats["recompile_twins"]["cause"] == cause
    return out[0]


def test_twins_run_only_for_a_recompile_verdict():
    numeric = Verdict("numeric", "inductor", "fp64-rule", "output 0 differs", 0, "output 0")
    calls = []
    obs = Observation("eager", [], {}, {})
    out = twins.name_cause(RICH, obs, [numeric], lambda twin, grads: calls.append(twin))
    assert out == [numeric] and calls == [] and "recompile_twins" not in obs.stats


def test_twins_run_on_the_ladders_rung_and_fall_back_when_it_does_not_show_the_kind():
    inductor = RICH.with_compile(backend="inductor")
    seen = []

    def counts(twin, grads):
        seen.append(twin.compile.backend)
        return _probe(lambda t: t.compile.backend == "eager" or not any(c.inference_inputs for c in t.calls))(twin)

    obs = Observation("inductor", [], {"ladder": {"stage": "capture"}}, {})
    twins.name_cause(inductor, obs, [_verdict("x")], counts)
    # the eager rung's control loses the verdict: the twins run on the case's own backend
    assert seen == ["eager", "inductor"] and obs.stats["recompile_twins"]["backend"] == "inductor"
    seen.clear()
    obs = Observation("inductor", [], {"ladder": {"stage": "capture"}}, {})
    twins.name_cause(inductor, obs, [_verdict("x")],
                     lambda twin, grads: seen.append(twin.compile.backend) or _probe(
                         lambda t: not any(c.inference_inputs for c in t.calls))(twin))
    assert seen == ["eager", "eager"] and obs.stats["recompile_twins"] == {
        "backend": "eager", "cause": "inference-inputs", "twins": {"inference-inputs": "stops"}}
