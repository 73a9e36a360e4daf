"""Knock-outs (fuzzcomp.reduce.knockout): the program without what a known-bug rule names."""
from __future__ import annotations

import dataclasses
import pathlib

import pytest

from fuzzcomp.findings.known import input_markers
from fuzzcomp.findings.triage import op_set
from fuzzcomp.generators import generate
from fuzzcomp.generators.ir import Assign, Mutate, walk, walk_program
from fuzzcomp.reduce.knockout import knock_out, knockouts, needs_of


def _ops(case):
    return [s.op.removeprefix("branch:") for s in walk_program(case.program) if isinstance(s, (Assign, Mutate))]


def test_needs_are_each_all_glob_and_the_any_globs_together():
    assert needs_of(("torch.add", "input:written", "input:0d-float64"), ("*expm1*", "torch.exp", "input:alias")) \
        == [("torch.add",), ("input:written",), ("*expm1*", "torch.exp")]
    assert needs_of((), ()) == []


@pytest.mark.parametrize("seed, op", [(3, "torch.cos"), (8, "torch.nn.functional.interpolate"), (25, "torch.remainder")])
def test_an_op_goes_at_any_depth_and_every_name_stays(seed, op):
    case = generate(seed)
    assert op in _ops(case) and not any(isinstance(s, Assign) and s.op == op for s in case.program.body)
    out = knock_out(case, (op,))
    assert out is not None and op not in _ops(out)
    # a copy of the first operand stands in: the statement count and the outputs are unchanged
    assert len(list(walk(out.program.body))) == len(list(walk(case.program.body)))
    assert out.program.outputs == case.program.outputs
    assert out.calls == case.calls
    # nothing else went
    assert sorted(op_set(out.program) - {"Tensor.clone"}) == sorted(op_set(case.program) - {op, "Tensor.clone"})


def test_an_op_left_in_a_helper_cannot_be_knocked_out():
    case = generate(0)  # its torch.erf sits in a helper function only
    assert "torch.erf" in _ops(case)
    assert knock_out(case, ("torch.erf",)) is None
    assert knockouts(case, [("torch.erf",)]) is None
    assert knockouts(case, []) is None


def test_an_op_the_program_lacks_cannot_be_knocked_out():
    case = generate(1)
    assert knock_out(case, ("torch.no_such_op",)) is None


@pytest.mark.parametrize("marker", ["input:written", "resume:written", "input:alias", "input:expanded",
                                    "region:nested"])
def test_each_undoable_input_marker_goes(marker):
    case = next(c for c in map(generate, range(200)) if marker in input_markers(c.program)
                and knock_out(c, (marker,)) is not None)
    out = knock_out(case, (marker,))
    assert marker not in input_markers(out.program)
    assert [i.name for i in out.program.inputs] == [i.name for i in case.program.inputs]


def test_most_ops_of_generated_programs_can_be_knocked_out():
    """The knock-out replaces a label check's minimisation only where it can build the case; a
    helper's op or an ill-typed stand-in falls back to the minimising check. Measured on 40 seeds
    (511 of 704 ops on 80 seeds when written); a regression that builds few would silently
    send every label check back to the 20-second minimisation."""
    done = total = 0
    for seed in range(40):
        case = generate(seed)
        for op in {s.op for s in walk(case.program.body) if isinstance(s, (Assign, Mutate))}:
            total += 1
            done += knock_out(case, (op,)) is not None
    assert done >= 0.6 * total, (done, total)


@pytest.mark.slow
@pytest.mark.parametrize("named, says", [(["mul"], "known"), (["relu"], "new"), (["mul", "relu"], "new")])
def test_a_knock_out_check_tells_the_planted_bug_from_a_rule_that_does_not_explain_it(named, says):
    """Both ways, with a real worker: the planted fault perturbs every mul. A rule naming mul
    loses the bug when mul is knocked out (the entry's bug); a rule naming relu, which the same
    program also holds, keeps it (news: the rule does not explain it), and so does a rule that
    needs both."""
    from oracle_cases import case, mul_relu
    from fuzzcomp.campaign.pipeline import knockout_check
    from fuzzcomp.findings.known import Match, entry_from_json
    from fuzzcomp.findings.triage import bucket_of
    from fuzzcomp.judge.check import check
    from fuzzcomp.oracles import primary
    from fuzzcomp.workers.worker import Worker, WorkerSettings
    c = case(mul_relu(), "fuzzcomp.planted:perturb_mul")
    _, verdicts = check(c)
    key = bucket_of(primary(verdicts))
    assert key.symptom == "numeric"
    bug = entry_from_json({"id": "planted", "title": "t", "state": "open",
                           "match": {"symptoms": ["numeric"], "ops_all": named}}, "test")
    w = Worker(0, WorkerSettings())
    w.start()
    try:
        verdict, n, _ = knockout_check(w, c, key, Match(bug, "rule", rule=bug.rules[0]), 120.0)
    finally:
        w.stop()
    assert verdict == says
    assert n == (len(named) if says == "known" else named.index("relu") + 1)


@pytest.mark.slow
@pytest.mark.parametrize("other_needs, says", [(["mul"], "known"), (["relu"], None)])
def test_a_bucket_left_to_another_entry_is_that_entrys_when_its_needs_are_necessary(monkeypatch, other_needs,
                                                                                     says):
    """The claim names relu; knocked out, the bucket stays and another entry claims what is left.
    That entry is checked on the whole program: naming mul (the planted fault), its knock-out
    loses the bug, so the finding is its bug (CPU 1512: expm1 claimed, amax's NaN gradient left);
    naming relu again, it explains nothing, the program without both entries' needs still shows
    the bug, and the check cannot tell."""
    import fuzzcomp.campaign.pipeline as pipeline
    from oracle_cases import case, mul_relu
    from fuzzcomp.findings.known import Match, entry_from_json
    from fuzzcomp.findings.triage import bucket_of
    from fuzzcomp.judge.check import check
    from fuzzcomp.oracles import primary
    from fuzzcomp.workers.worker import Worker, WorkerSettings
    c = case(mul_relu(), "fuzzcomp.planted:perturb_mul")
    _, verdicts = check(c)
    key = bucket_of(primary(verdicts))
    first = entry_from_json({"id": "claims-relu", "title": "t", "state": "open",
                             "match": {"symptoms": ["numeric"], "ops_all": ["relu"]}}, "test")
    other = entry_from_json({"id": "the-other", "title": "t", "state": "open",
                             "match": {"symptoms": ["numeric"], "ops_all": other_needs}}, "test")
    monkeypatch.setattr(pipeline, "claim", lambda k, cand, *a: Match(other, "rule", rule=other.rules[0]))
    w = Worker(0, WorkerSettings())
    w.start()
    try:
        verdict, n, proven = pipeline.knockout_check(w, c, key, Match(first, "rule", rule=first.rules[0]), 120.0)
    finally:
        w.stop()
    assert verdict == says and n == (2 if says == "known" else 3)  # still there: one probe without both
    assert proven.bug.id == ("the-other" if says == "known" else "claims-relu")


def _cpu1518():
    from fuzzcomp.findings.store import load_finding
    d = load_finding(pathlib.Path(__file__).parent / "data" / "cpu1518_offset_alias_helper_clone.json")
    return d["case_obj"], d["bucket_obj"], d["verdict_objs"]


def test_a_slice_keeps_the_named_outputs_what_computes_them_and_the_writes():
    """CPU 1518's numeric-autograd-ac74e75f finding: output[2] (x3.narrow of an offset alias of
    the written x0) is wrong. The synthetic-base entry claims it, and a helper's clone that no
    output reads makes the noop-clone entry a rival no knock-out can rule out (a statement in a
    helper cannot go). Sliced to output[2], the program is the write and the narrow; the rival
    no longer holds. An output the helper feeds keeps it, and the rival with it."""
    from fuzzcomp.campaign.pipeline import _rival_sliced_away, failing_outputs
    from fuzzcomp.findings.known import claim
    from fuzzcomp.reduce.knockout import sliced
    case, key, verdicts = _cpu1518()
    whole = claim(key, case)
    assert whole.bug.id == "synthetic-base-offset-alias-output-view" and "noop-clone-of-mutated-input" in whole.rivals
    assert failing_outputs(verdicts, key) == (2,)
    cut = sliced(case, (2,))
    assert cut.program.outputs == ("v10",) and cut.program.helpers == ()
    assert [s.op for s in cut.program.body] == ["Tensor.neg_", "Tensor.narrow"]
    again = claim(key, cut)
    assert again.bug.id == whole.bug.id and again.rivals == ()
    assert sliced(case, (0, 2)).program.outputs == ("v9", "v10")     # the program's order
    # the helper's result as a fourth output, the one named: the slice keeps the clone, and the
    # rival is not ruled out (no probe: the worker is never asked)
    p = case.program
    fed = dataclasses.replace(case, program=dataclasses.replace(p, outputs=p.outputs + ("v5",)))
    assert sliced(fed, (3,)).program.helpers and claim(key, sliced(fed, (3,))).rivals
    assert _rival_sliced_away(None, fed, key, whole, "noop-clone-of-mutated-input", (3,), 60.0, (None, None),
                              None) == (False, 0)
    assert _rival_sliced_away(None, case, key, whole, "noop-clone-of-mutated-input", (), 60.0, (None, None),
                              None) == (False, 0)


def test_failing_outputs_reads_tuple_nested_and_dict_labels_of_the_bucket_only():
    from fuzzcomp.campaign.pipeline import failing_outputs
    from fuzzcomp.findings.triage import bucket_of
    from fuzzcomp.oracles import Verdict
    v = [Verdict("numeric", "inductor", "o", "d", label=lab, signature="s")
         for lab in ("output[3][1]", "output['o1']", "output", "grad of x0", "output[3]")]
    assert failing_outputs(v, bucket_of(v[0])) == (3, 1)
    other = Verdict("numeric", "inductor", "o", "d", label="output[0]", signature="t")
    assert failing_outputs(v + [other], bucket_of(v[0])) == (3, 1)


@pytest.mark.slow
def test_cpu1518_label_check_rules_out_the_rival_on_the_slice_instead_of_minimising():
    """With a real worker: the whole program's knock-out says the write is needed, and the
    rival's clone cannot be knocked out, so without the slice the check cannot tell (the
    campaign spent 21 s minimising); sliced to the wrong output, one more probe says known."""
    from fuzzcomp.campaign.pipeline import failing_outputs, knockout_check
    from fuzzcomp.findings.known import claim
    from fuzzcomp.workers.worker import Worker, WorkerSettings
    case, key, verdicts = _cpu1518()
    known = claim(key, case)
    w = Worker(0, WorkerSettings())
    w.start()
    try:
        blind = knockout_check(w, case, key, known, 120.0)
        seen = knockout_check(w, case, key, known, 120.0, outputs=failing_outputs(verdicts, key))
    finally:
        w.stop()
    assert blind[:2] == (None, 1)
    assert seen[:2] == ("known", 2) and seen[2].bug.id == "synthetic-base-offset-alias-output-view"
