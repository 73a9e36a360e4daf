"""The fp64 rule's floor for float64 values that went through a coarser float (run/case_tables
``mixed_precision_eps``, run/value_floors).

CPU 1510 filed ``numeric-inductor-343988cf``: ``l1_loss`` of two float32 tensors (a float32 mean),
then ``torch.minimum`` with a float64 input. Type promotion makes the output float64, but its
value holds a float32 rounding: eager's mean was 0.05 ulp off, compiled's (another summation
order) 0.4 ulp, and float64's floor called the second a bug.
"""
import dataclasses
import json
import pathlib

import pytest
import torch

from fuzzcomp.findings.store import case_from_json
from fuzzcomp.planted.faults import perturb_results
from fuzzcomp.generators.ir import TensorType
from fuzzcomp.run.case_tables import mixed_precision_eps
from fuzzcomp.run.value_floors import output_floor_eps

F32, F64 = torch.finfo(torch.float32).eps, torch.finfo(torch.float64).eps
CASE = pathlib.Path(__file__).parent / "data" / "cpu1510_l1_loss_minimum_mixed.json"


def _case():
    return case_from_json(json.loads(CASE.read_text()))


def _retyped(case, dtype):
    """The same program with every float input of ``dtype``."""
    inputs = tuple(dataclasses.replace(i, type=TensorType(i.type.shape, dtype)) if i.type.is_float else i
                   for i in case.program.inputs)
    return dataclasses.replace(case, program=dataclasses.replace(case.program, inputs=inputs))


def test_a_float64_value_made_from_float32_inputs_gets_float32s_floor():
    case = _case()
    assert mixed_precision_eps(case) == F32
    assert output_floor_eps(case, mixed_precision_eps(case)) == {}  # the output is reached by float32
    assert mixed_precision_eps(_retyped(case, "float64")) == 0.0  # one precision: float64's own floor
    assert mixed_precision_eps(_retyped(case, "float32")) == 0.0  # one precision: float32's own floor


def test_a_float64_output_no_float32_value_reaches_keeps_float64s_floor():
    case = _case()
    p = case.program  # return only x0 (float64) through the program's last statement's shape
    from fuzzcomp.generators.ir import Assign, Ref
    body = p.body + (Assign("w", "torch.sin", "torch.sin({0})", (Ref("x0"),), p.inputs[0].type),)
    prog = dataclasses.replace(p, body=body, outputs=p.outputs + ("w",))
    got = output_floor_eps(dataclasses.replace(case, program=prog), F32)
    assert got == {"output[1]": 0.0}


#: a planted fault for the test below: torch.minimum's result comes back 1e-5 high
minimum_off = perturb_results({torch.minimum}, 1 + 1e-5)


@pytest.mark.slow
def test_the_float32_rounding_of_a_promoted_value_is_silent_and_a_fault_is_still_caught():
    from fuzzcomp.judge.check import check
    from fuzzcomp.run.execute import ExecOptions
    quick = ExecOptions(ladder=False, culprit=False)
    _, verdicts = check(_case().with_compile(backend="inductor"), quick)
    assert not verdicts, [v.detail for v in verdicts]
    _, verdicts = check(_case().with_compile(backend="test_mixed_precision:minimum_off"), quick)
    assert any(v.symptom == "numeric" for v in verdicts), [v.detail for v in verdicts]
