"""Degenerate normalisation is ill-conditioned, not miscompiled: over a row of one element or of
equal values eager gives exactly the bias, while compiled code whose mean is one rounding away
gives that rounding times 1/sqrt(eps). The perturbed eager runs move each normalisation's mean by
a few roundings (``fuzzcomp.run.norm_jitter``), so the fp64 rule screens that case; a real fault
in a normalisation over rows of real variance is still a mismatch."""
from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn.functional as F

from fuzzcomp.oracles.fp64rule import compare
from fuzzcomp.run.execute import PERTURB_EPS
from fuzzcomp.run.norm_jitter import NormJitter


def _runs(fn, x, w, b):
    eager = fn(x, w, b)
    ref = fn(x.double(), w.double(), b.double())
    perturbed = []
    for d in range(2):
        with NormJitter(7, d, PERTURB_EPS):
            perturbed.append(fn(x, w, b))
    return eager, ref, perturbed


def _one_rounding_off_mean(fn_name, x, w, b, eps=1e-5):
    """What compiled code computing the mean one rounding off gives."""
    dims = -1 if fn_name == "layer_norm" else (0, 2)
    xd = x.double()
    acc = torch.float32 if x.dtype == torch.float16 else x.dtype  # half norms compute in float32
    mean = xd.mean(dims, keepdim=True) * (1 + torch.finfo(acc).eps)
    var = xd.var(dims, unbiased=False, keepdim=True)
    shape = (-1,) if fn_name == "layer_norm" else (1, -1, 1)
    return ((xd - mean) * torch.rsqrt(var + eps) * w.double().reshape(shape) + b.double().reshape(shape)).to(x.dtype)


LN = lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b)  # noqa: E731
BN = lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)  # noqa: E731


# (half inputs are normalised in float32: one float32 rounding of the mean times 1/sqrt(eps) is
# below a half ulp of the bias, so no half output shows it)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(3, 1), (2, 4)])  # one element per row; rows of equal values
def test_degenerate_layer_norm_is_screened(dtype, shape):
    x = torch.full(shape, 1.7, dtype=dtype) if shape[-1] > 1 else torch.tensor([[1.7], [-0.3], [2.5]], dtype=dtype)
    w, b = torch.linspace(0.5, 1.5, shape[-1], dtype=dtype), torch.linspace(-1, 1, shape[-1], dtype=dtype)
    eager, ref, perturbed = _runs(LN, x, w, b)
    compiled = _one_rounding_off_mean("layer_norm", x, w, b)
    assert not torch.equal(compiled, eager)
    assert compare(eager, eager.clone(), ref, compiled)[0] == "mismatch"  # the false positive before
    assert compare(eager, eager.clone(), ref, compiled, perturbed)[0] == "skip"


def test_degenerate_batch_norm_is_screened():
    x = torch.full((2, 3, 1), 0.9)  # equal values per channel
    w, b = torch.linspace(0.5, 1.5, 3), torch.linspace(-1, 1, 3)
    eager, ref, perturbed = _runs(BN, x, w, b)
    compiled = _one_rounding_off_mean("batch_norm", x, w, b)
    assert compare(eager, eager.clone(), ref, compiled)[0] == "mismatch"
    assert compare(eager, eager.clone(), ref, compiled, perturbed)[0] == "skip"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_fault_in_layer_norm_over_normal_rows_still_found(dtype):
    x = torch.linspace(-2, 3, 24, dtype=dtype).reshape(3, 8).sin()
    w, b = torch.linspace(0.5, 1.5, 8, dtype=dtype), torch.linspace(-1, 1, 8, dtype=dtype)
    eager, ref, perturbed = _runs(LN, x, w, b)
    # the jitter is a few roundings there, not more
    assert all((p.double() - eager.double()).abs().max() < 16 * torch.finfo(dtype).eps * 4 for p in perturbed)
    planted = (eager.double() * (1 + 1e-2 if dtype == torch.float16 else 1 + 1e-3)).to(dtype)
    assert compare(eager, eager.clone(), ref, planted, perturbed)[0] == "mismatch"


def test_jitter_leaves_other_ops_and_eval_batch_norm_alone():
    x = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
    rm, rv = torch.zeros(3), torch.ones(3)
    with NormJitter(1, 0, PERTURB_EPS):
        y = torch.softmax(x, -1), F.batch_norm(x, rm, rv, training=False)
    assert torch.equal(y[0], torch.softmax(x, -1)) and torch.equal(y[1], F.batch_norm(x, rm, rv, training=False))


def _std_grads(x, fn, jitter=None):
    x = x.detach().clone().requires_grad_()
    with (NormJitter(5, jitter, PERTURB_EPS) if jitter is not None else contextlib.nullcontext()):
        out = fn(x)
        w = torch.randint(-64, 65, out.shape, generator=torch.Generator().manual_seed(2)) / 64
        out.backward(w.to(out.dtype))
    return x.grad


STD = lambda x: torch.std(torch.mm(x, x.t()), 0, keepdim=True)  # noqa: E731


def _off_mean_std(x):
    """std as compiled code whose mean is one float32 rounding off computes it."""
    v = torch.mm(x, x.t())
    mean = v.mean(0, keepdim=True).detach() * (1 + torch.finfo(torch.float32).eps)
    return torch.sqrt(((v - mean) ** 2).sum(0, keepdim=True) / (v.shape[0] - 1))


@pytest.mark.parametrize("compiled_by", ["one rounding off", pytest.param("inductor", marks=pytest.mark.slow)])
def test_std_gradient_over_equal_values_is_screened(compiled_by):
    """Rows that are copies (an input expanded from one row): ``mm(x, x.t())`` is one value
    repeated, its std is exactly 0 in eager and fp64, and std's backward gives 0 there; compiled
    code whose mean is one rounding off gives a std of that rounding and a gradient of order 1
    (measured on Inductor CPU, torch 2.13: eager 0, compiled 1.05 at most). The perturbed runs see
    the mean moved by a few roundings, so they land as far away."""
    x = torch.tensor([[1.3, -0.4, 0.9, 1.7, -1.1, 0.2, 0.6]]).expand(15, 7)
    eager, ref = _std_grads(x, STD), _std_grads(x.double(), STD)
    assert torch.equal(eager, torch.zeros_like(eager)) and torch.equal(ref, torch.zeros_like(ref))
    compiled = _std_grads(x, torch.compile(STD, backend="inductor") if compiled_by == "inductor" else _off_mean_std)
    perturbed = [_std_grads(x, STD, d) for d in range(2)]
    assert compare(eager, eager.clone(), ref, compiled)[0] == "mismatch"  # the false positive before
    assert compare(eager, eager.clone(), ref, compiled, perturbed)[0] == "skip"


@pytest.mark.parametrize("correction_form", ["default", "unbiased=False", "std_mean"])
def test_fault_in_std_gradient_over_real_spread_still_found(correction_form):
    fn = {"default": lambda x: torch.std(x, 1),
          "unbiased=False": lambda x: x.std(1, False, True),
          "std_mean": lambda x: torch.std_mean(x, (0, 1), correction=0)[0]}[correction_form]
    x = torch.linspace(-2, 3, 24).reshape(3, 8).sin()
    eager, ref = _std_grads(x, fn), _std_grads(x.double(), fn)
    perturbed = [_std_grads(x, fn, d) for d in range(2)]
    # the moved mean shifts the gradient by a few roundings, not more
    assert all((p - eager).abs().max() < 64 * torch.finfo(torch.float32).eps for p in perturbed)
    assert not all(torch.equal(p, eager) for p in perturbed)  # the form is modelled
    planted = eager * (1 + 1e-3)
    assert compare(eager, eager.clone(), ref, planted, perturbed)[0] == "mismatch"


@pytest.mark.parametrize("floor", [0.0, 2.0 ** -7])
def test_std_over_copies_is_screened_when_an_autocast_region_coarsens_the_perturbation(floor):
    """H200 campaign, seed 1501 (gradient-inductor-b0894ae7): an expanded input's copies, a std
    over them, and an autocast region elsewhere in the program. The autocast floor moves each copy
    by bfloat16 steps, so the perturbed runs' std has a real spread and its gradient no longer
    points one way; the std's mean moves by the same floor, so they land as far as compiled."""
    from fuzzcomp.run.runtime import make_input
    x = make_input((15, 7), "float32", "expanded", seed=3)
    eager, ref = _std_grads(x, STD), _std_grads(x.double(), STD)
    compiled = _std_grads(x, _off_mean_std)
    perturbed = []
    for d in range(2):
        xp = make_input((15, 7), "float32", "expanded", seed=3, perturb=PERTURB_EPS, draw=d, perturb_floor=floor)
        xp = xp.detach().clone().requires_grad_()
        with NormJitter(5, d, PERTURB_EPS, floor):
            out = STD(xp)
            w = torch.randint(-64, 65, out.shape, generator=torch.Generator().manual_seed(2)) / 64
            out.backward(w)
        perturbed.append(xp.grad)
    assert compare(eager, eager.clone(), ref, compiled)[0] == "mismatch"
    assert compare(eager, eager.clone(), ref, compiled, perturbed)[0] == "skip"
