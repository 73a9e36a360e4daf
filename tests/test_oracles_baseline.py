"""Honest baseline: correct backends give zero findings on generated cases.

The default suite runs 120 cases (60 per backend); ``-m slow`` runs 500 per
backend. A finding here is a false positive of the oracles (or a generator
bug): fix its cause, never a tolerance.

Real compiler bugs are not false positives: each real bug the baseline
meets is listed in ``KNOWN_REAL`` with its standalone three-line repro, and
``test_known_real_bugs_still_reproduce`` fails as soon as PyTorch fixes it, so
the exclusion cannot outlive the bug.
"""
import pytest
import torch

from fuzzcomp.execute import check, configure_torch
from fuzzcomp.generators import generate

configure_torch()


def _saved_input_mutated() -> bool:
    """AOTAutograd: an input that does not require grad, mutated in place with a value that
    does, makes the compiled backward fail ("modified by an inplace operation ... output 0
    of CopyBackwards"); eager's backward succeeds."""
    def fn(x0, x1):
        x1.mul_(x0)
        return x1 * 2
    x0, x1 = torch.rand(3, 1).requires_grad_(), torch.rand(3, 4)
    fn(x0, x1).sum().backward()   # eager is fine
    x0, x1 = torch.rand(3, 1).requires_grad_(), torch.rand(3, 4)
    try:
        torch.compile(fn, backend="aot_eager")(x0, x1).sum().backward()
    except RuntimeError as e:
        return "modified by an inplace operation" in str(e)
    return False


def _zero_instead_of_none() -> bool:
    """AOTAutograd: an input that only reaches a mutated input gets a zero grad where eager's
    is None (the compiled autograd.Function materialises the hidden output's grad)."""
    def fn(x0, x1, x2):
        x2.add_(x0)
        return x1 * 2
    grads = []
    for f in (fn, torch.compile(fn, backend="aot_eager")):
        x0, x1, x2 = torch.rand(3).requires_grad_(), torch.rand(3).requires_grad_(), torch.rand(3)
        f(x0, x1, x2).sum().backward()
        grads.append(x0.grad)
    return grads[0] is None and grads[1] is not None


def _compile_time_inplace_on_saved() -> bool:
    """AOTAutograd: an intermediate saved for backward (sqrt's output), then overwritten in place,
    that is live across a graph break makes the compile itself fail ("modified by an inplace
    operation ... output 0 of Sqrt"), although eager's backward never passes through it."""
    def fn(x):
        v = torch.sqrt(torch.abs(x) + 0.25)
        v.copy_(x)
        if (x > -5).any():
            return x * 2
        return torch.tanh(v)
    fn(torch.rand(3, 3).requires_grad_()).sum().backward()   # eager is fine
    try:
        torch.compile(fn, backend="aot_eager")(torch.rand(3, 3).requires_grad_()).sum().backward()
    except Exception as e:  # BackendCompilerFailed wraps the RuntimeError
        return "modified by an inplace operation" in str(e)
    return False


KNOWN_REAL = {
    "aot-compile-time-inplace-on-saved": (
        _compile_time_inplace_on_saved,
        lambda v: v.symptom == "compile-crash" and "BackendCompilerFailed" in v.detail
        and "modified by an inplace operation" in v.detail),
    "aot-saved-input-mutated": (
        _saved_input_mutated,
        lambda v: v.symptom == "runtime-crash" and "CopyBackwards" in v.detail
        and "modified by an inplace operation" in v.detail),
    "aot-zero-grad-instead-of-none": (
        _zero_instead_of_none,
        lambda v: v.symptom == "gradient" and v.detail.endswith("eager gave None, compiled a tensor")),
}


def _known(v) -> str | None:
    return next((name for name, (_, match) in KNOWN_REAL.items() if match(v)), None)


def _findings(backend, seeds):
    out, graded, known = [], 0, []
    for seed in seeds:
        obs, verdicts = check(generate(seed).with_compile(backend=backend))
        graded += obs.stats.get("grad") == "on"
        for v in verdicts:
            if backend != "eager" and _known(v):
                known.append((seed, _known(v)))
            else:
                out.append(f"seed {seed}: {v.symptom} {v.detail[:160]}")
    print(f"{backend}: {len(list(seeds))} cases, {graded} with gradients, known real bugs: {known}")
    return out, graded


@pytest.mark.parametrize("name", sorted(KNOWN_REAL))
def test_known_real_bugs_still_reproduce(name):
    assert KNOWN_REAL[name][0](), f"{name} no longer reproduces: remove it from KNOWN_REAL"


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_baseline_default(backend):
    found, graded = _findings(backend, range(500_000, 500_060))
    assert graded > 20  # the gradient oracle really ran on many of them
    assert not found, "\n".join(found)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_baseline_500(backend):
    found, graded = _findings(backend, range(600_000, 600_500))
    assert graded > 150
    assert not found, "\n".join(found)
