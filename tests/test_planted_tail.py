"""The tail forms (``generators.tail_forms``): each proven by a planted fault only it triggers,
found on cases with the form forced, while a correct compilation (aot_eager) of the same case
stays silent and the fault stays silent on the same config's cases without the form."""
from __future__ import annotations

import warnings

import pytest

from fuzzcomp.generators import GenConfig, generate
from fuzzcomp.generators.features import features
from fuzzcomp.generators.tail_forms import HAS_NESTED
from fuzzcomp.judge.check import check
from fuzzcomp.run.execute import configure_torch

# (capability = its feature, planted backend, seeds to search)
CASES = [
    ("out_topk_max_norm", "out_topk_max_norm_bug", 40),
    ("widen_view_out", "widen_view_out_bug", 40),
    pytest.param("nested_region", "nested_region_bug", 40,
                 marks=pytest.mark.skipif(not HAS_NESTED, reason="no torch.compiler.nested_compile_region")),
]


def _config(cap: str) -> GenConfig:
    # no global state changed inside the function: aot_eager loses such changes on cached calls,
    # a known bug of its own that the correct-backend check must not meet
    return GenConfig(force=(cap,), reach_weights=(("gstate", 0.0),))


@pytest.mark.slow
@pytest.mark.parametrize("cap,backend,limit", CASES)
def test_planted_fault_found_and_correct_backend_silent(cap, backend, limit):
    configure_torch()
    found, tried = None, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(limit):
            case = generate(seed, _config(cap))
            if cap not in features(case):
                continue
            tried += 1
            _, verdicts = check(case.with_compile(backend=f"fuzzcomp.planted:{backend}"))
            if verdicts:
                found = case
                break
            if tried == 8:
                break
        assert found is not None, f"{backend} not found on {tried} cases with {cap}"
        _, verdicts = check(found.with_compile(backend="aot_eager"))
    assert not verdicts, (found.seed, [v.detail for v in verdicts])


@pytest.mark.slow
@pytest.mark.parametrize("cap,backend,limit", CASES)
def test_fault_needs_its_form(cap, backend, limit):
    """Cases of the same config that lack the form (the builder found nothing to apply it to,
    or the program returns a single value) leave the fault silent, and so do cases with one of
    the other two tail forms."""
    configure_torch()
    others = [c[0] if isinstance(c, tuple) else c.values[0] for c in CASES]
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(200):
            other = [o for o in others if o != cap][seed % 2]
            case = generate(seed, GenConfig(force=(other,), reach_weights=(("gstate", 0.0),)))
            if cap in features(case) or other not in features(case):
                continue
            _, verdicts = check(case.with_compile(backend=f"fuzzcomp.planted:{backend}"))
            assert not verdicts, (seed, [v.detail for v in verdicts])
            checked += 1
            if checked == 2:
                break
    assert checked == 2
