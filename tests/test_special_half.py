"""The exact special-values rule on half-precision values whose "fp64" run stayed half (a
program that builds fp16/bf16 constants itself): eager overflowing to inf where compiled, with
Inductor's fp32 intermediates, stays finite is by design and silent; a compiled NaN or inf
where eager is finite (the fp64 rule's part), a lost NaN, a changed inf and a flipped zero are
still found; and where the fp64 run
really is fp64 the overflow rule is unchanged."""
from __future__ import annotations

import pytest
import torch

from fuzzcomp.oracles.special import compare_special

inf, nan = float("inf"), float("nan")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_overflow_kept_finite_by_fp32_intermediates_is_silent(dtype):
    # 1 / atan2(v, v) with v = c * c: eager's product of 6e4 overflows (and of 6.2e-5 underflows),
    # compiled computes the product in fp32
    e = torch.tensor([inf, -inf, 0.7852, -0.0, nan], dtype=dtype)
    ref = e.clone()  # the program's own fp16 constants: the fp64 run is fp16 too
    c = torch.tensor([1.273, -1.273, 0.7852, -0.0, nan], dtype=dtype)
    assert compare_special(e, e.clone(), ref, c, sign=True) == ("ok", "")


@pytest.mark.parametrize("bad", [[inf, -inf, 0.7852, 0.0, nan],    # -0.0 flipped
                                 [inf, -inf, 0.7852, -0.0, 1.0],   # a NaN lost
                                 [inf, inf, 0.7852, -0.0, nan]])   # -inf became +inf
def test_half_planted_faults_still_found(bad):
    e = torch.tensor([inf, -inf, 0.7852, -0.0, nan], dtype=torch.float16)
    c = torch.tensor(bad, dtype=torch.float16)
    assert compare_special(e, e.clone(), e.clone(), c, sign=True)[0] == "mismatch"


def test_half_finite_turned_nan_still_found_by_the_fp64_rule():
    from fuzzcomp.oracles.fp64rule import compare
    e = torch.tensor([1.0, 0.7852], dtype=torch.float16)
    c = torch.tensor([1.0, nan], dtype=torch.float16)
    assert compare(e, e.clone(), e.clone(), c)[0] == "mismatch"


def test_real_fp64_witness_of_overflow_still_judges():
    # the fp64 run is fp64 and overflows too: the value is truly out of range, compiled must agree
    e = torch.tensor([inf, 1.0], dtype=torch.float16)
    ref = torch.tensor([inf, 1.0], dtype=torch.float64)
    c = torch.tensor([6.0e4, 1.0], dtype=torch.float16)
    assert compare_special(e, e.clone(), ref, c, sign=True)[0] == "mismatch"
    f32 = torch.tensor([inf, 1.0])  # float32 values: never excused
    assert compare_special(f32, f32.clone(), f32.clone(), torch.tensor([3.0e38, 1.0]), sign=True)[0] == "mismatch"
