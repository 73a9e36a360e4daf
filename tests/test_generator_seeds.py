"""Seeds that once crashed the generator build their programs: a reduction's bound is a power
only for prod (the float power of every other reduction overflowed Python first)."""
from __future__ import annotations

import pytest

from fuzzcomp.generators import emit, generate


@pytest.mark.parametrize("seed", [74013, 99068])
def test_out_reduction_bound_seeds_generate(seed):
    case = generate(seed)
    assert f"def {case.program.name}(" in emit(case.program)
    assert generate(seed) == case  # and the same one each time
