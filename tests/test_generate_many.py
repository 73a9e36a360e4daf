"""Generation never raises: 5,000 default seeds, and 1,000 with every argument capability and the
scalar reads forced on, generate, emit valid Python and yield their features and capabilities
(``benchmarks/generate_many.py`` runs the same loop over 100,000 seeds)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "generate_many", Path(__file__).resolve().parent.parent / "benchmarks" / "generate_many.py")
generate_many = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate_many)


def test_five_thousand_default_seeds_generate():
    _secs, errors = generate_many.run(5000)
    assert errors == []


@pytest.mark.parametrize("first", [5000])
def test_forced_argument_capabilities_generate(first):
    _secs, errors = generate_many.run(1000, first=first,
                                      force=("fill_softmax", "inf_divisor", "half_divisor", "scalars"))
    assert errors == []


def test_forced_tail_forms_generate():
    _secs, errors = generate_many.run(1000, first=6000,
                                      force=("out_topk_max_norm", "widen_view_out", "nested_region"))
    assert errors == []


def test_forced_edges_generate():
    _secs, errors = generate_many.run(1000, first=7000,
                                      force=("reduce_tail_remainder", "edge_dims", "alias_base_write_offset_view"))
    assert errors == []
