"""The statements a case's calls run (fuzzcomp.run.branches) and the resume-graph write marker:
a finding's identity reads only what its calls execute (CPU 1512: an add_ in an else no call
took labelled a resume-graph crash as another entry's bug)."""
import ast
import sys

import pytest

from fuzzcomp.findings.known import input_markers, resume_writes
from fuzzcomp.findings.triage import op_set
from fuzzcomp.generators import emit, generate
from fuzzcomp.generators.ir import DataCond, If, Mutate, Ref, walk
from fuzzcomp.reduce.ir_edits import with_program
from fuzzcomp.run.branches import taken_program, written_roots
from fuzzcomp.run.execute import DEFAULT_OPTIONS, _Runner
from fuzzcomp.run.runtime import run_call


def _traced_branches(case):
    """Per if-statement of the main function (document order): which branches a traced eager
    run of every call executes a line of."""
    source = emit(case.program)
    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == case.program.name)
    ifs = sorted((n for n in ast.walk(fn) if isinstance(n, ast.If)), key=lambda n: n.lineno)
    runner = _Runner(case, DEFAULT_OPTIONS)
    lines: set[int] = set()
    code = runner.fn.__code__

    def tracer(frame, event, arg):
        if frame.f_code is code and event == "line":
            lines.add(frame.f_lineno)
        return tracer
    for call in case.calls:
        sys.settrace(tracer)
        try:
            run_call(runner.fn, runner.inputs(call), runner.names, call.seed)
        finally:
            sys.settrace(None)

    def ran(block):
        return any(s.lineno in lines for s in block)
    return [(ran(n.body), ran(n.orelse)) for n in ifs]


def test_the_pruned_program_keeps_exactly_the_branches_an_eager_run_takes():
    """For generated programs (functions, not modules), every branch the pruning keeps for a
    decidable condition is one a traced eager run executes, and every branch it drops is one
    no call executes: it never drops what ran (the whole program is the safe side)."""
    checked = dropped = 0
    for seed in range(120):
        case = generate(seed)
        p = case.program
        if p.module is not None or not any(isinstance(s, If) for s in walk(p.body)):
            continue
        ir_ifs = [s for s in walk(p.body) if isinstance(s, If)]
        pruned = [s for s in walk(taken_program(case).body) if isinstance(s, If)]
        if len(pruned) != len(ir_ifs):  # a dropped branch held an if: compare the outer ones only
            continue
        traced = _traced_branches(case)
        assert len(traced) == len(ir_ifs)
        for orig, kept, (then_ran, else_ran) in zip(ir_ifs, pruned, traced):
            checked += 1
            if orig.then and not kept.then:
                dropped += 1
                assert not then_ran, (seed, orig.cond)
            if orig.orelse and not kept.orelse:
                dropped += 1
                assert not else_ran, (seed, orig.cond)
            if bool(kept.then) != bool(kept.orelse) and orig.then and orig.orelse:  # decided: one ran
                assert (then_ran, else_ran) == (bool(kept.then), bool(kept.orelse)), (seed, orig.cond)
    assert checked >= 20 and dropped >= 10  # the comparison ran on enough programs to mean something


def test_an_op_only_in_a_branch_no_call_takes_is_not_part_of_the_identity():
    case = next(c for c in map(generate, range(100)) if op_set(c.program) - op_set(taken_program(c)))
    assert op_set(taken_program(case)) < op_set(case.program)


def test_a_condition_on_a_written_input_keeps_both_branches():
    """The data of an input some statement writes may differ at the if: never judged from the
    call's fresh inputs."""
    case = next(c for c in map(generate, range(300))
                if any(isinstance(s, If) and isinstance(s.cond, DataCond) for s in walk(c.program.body))
                and op_set(c.program) - op_set(taken_program(c)))
    cond = next(s.cond for s in walk(case.program.body) if isinstance(s, If) and isinstance(s.cond, DataCond))
    first = next(s for s in walk(case.program.body) if isinstance(s, If))
    write = Mutate(cond.var, "Tensor.mul_", "{0}.mul_(1)", (Ref(cond.var),))
    body = tuple(write if s is first else s for s in case.program.body)  # replaced only when top level
    if body == case.program.body:
        pytest.skip("its first if is nested")
    body = (write,) + case.program.body
    written = with_program(case, body=body)
    assert cond.var in written_roots(written.program)
    kept = [s for s in walk(taken_program(written).body) if isinstance(s, If) and s.cond == cond]
    assert kept and all((s.then or not o.then) and (s.orelse or not o.orelse)
                        for s, o in zip(kept, [x for x in walk(written.program.body) if isinstance(x, If) and x.cond == cond]))


def test_a_program_whose_inputs_cannot_be_built_is_left_whole():
    case = next(c for c in map(generate, range(100)) if op_set(c.program) - op_set(taken_program(c)))
    broken = case.with_compile(device="no-such-device")
    assert taken_program(broken) == broken.program


def test_a_write_after_a_graph_break_into_a_value_from_before_it_is_resume_written():
    """The resume graph gets that value as an input and writes it in place: remat-reads-mutated-
    input's crash form in the resume graph (CPU 1512 runtime-crash-inductor-cba82c1c)."""
    from fuzzcomp.generators.ir import Assign
    case = next(c for c in map(generate, range(300)) if resume_writes(c.program))
    w = resume_writes(case.program)[0]
    assert "resume:written" in input_markers(case.program)
    # the same write moved before every break is a write inside one graph: no marker
    body = tuple(s for s in case.program.body if s is not w)
    breaks = [i for i, s in enumerate(body) if (isinstance(s, If) and isinstance(s.cond, DataCond))
              or (isinstance(s, (Assign, Mutate)) and ".item()" in s.template)]
    defined = next((i for i, s in enumerate(body) if getattr(s, "out", None) == w.target), None)
    if w not in case.program.body or defined is None or not breaks or defined > breaks[0]:
        pytest.skip("the write or its value is nested")
    moved = body[:defined + 1] + (w,) + body[defined + 1:]
    assert w not in resume_writes(with_program(case, body=moved).program)
