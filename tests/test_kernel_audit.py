"""The eager-kernel audit, both ways: it catches kernels that read outside their input view
(a planted one, and torch's own CPU median over a stride-0 dim) and stays silent on the
kernels of generated programs; a mismatch in a call where eager's kernel misbehaved is never
blamed on the compiler, while the same planted compiler fault elsewhere still is.

The CI failure that motivated it: seed 500004 under aot_eager. ``torch.median(v.expand(n, -1), 0)``
reads one element past ``v`` on torch 2.13 CPU; eager read a benign value and the compiled
graph (which calls the same kernel) read a huge negative one, so the campaign blamed the compiler.
"""
import pytest
import torch

from fuzzcomp.run.execute import configure_torch
from fuzzcomp.judge.check import check
from fuzzcomp.generators import generate
from fuzzcomp.generators.ir import Assign, Input, Program, Ref, TensorType
from fuzzcomp.run.kernel_audit import KernelAudit

from oracle_cases import case

configure_torch()


@torch.library.custom_op("fuzzcomp_audit::peek_next", mutates_args=())
def peek_next(x: torch.Tensor) -> torch.Tensor:
    """A planted eager bug: adds to each element the one stored right after the view's last."""
    past = x.as_strided((1,), (1,), x.storage_offset() + (x.numel() - 1) * x.stride(-1) + x.stride(-1))
    return x + past


@peek_next.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("fuzzcomp_audit::honest", mutates_args=())
def honest(x: torch.Tensor) -> torch.Tensor:
    """The same op done right: reads only the view."""
    return x + x[-1:]


@honest.register_fake
def _(x):
    return torch.empty_like(x)


def _flags(fn):
    with KernelAudit() as audit:
        fn()
    return audit.flagged


def test_planted_out_of_bounds_kernel_is_caught():
    base = torch.randn(9)
    flags = _flags(lambda: peek_next(base[:8]))
    assert flags and flags[0].startswith("fuzzcomp_audit.peek_next"), flags
    assert "outside its input view" in flags[0]


def test_honest_kernel_on_the_same_view_is_not_flagged():
    base = torch.randn(9)
    assert _flags(lambda: honest(base[:8])) == []
    assert _flags(lambda: honest(base[1:])) == []


def test_audit_keeps_random_ops_on_their_stream_and_results_unchanged():
    x = torch.randn(6, 4)
    torch.manual_seed(3)
    plain = torch.nn.functional.dropout(x.t(), 0.5)
    after_plain = torch.rand(3)
    torch.manual_seed(3)
    with KernelAudit() as audit:
        audited = torch.nn.functional.dropout(x.t(), 0.5)
    assert torch.equal(plain, audited) and torch.equal(after_plain, torch.rand(3))
    assert audit.flagged == []


def test_torch_median_over_a_stride0_dim_is_caught():
    """A real eager bug of torch's CPU median (torch 2.13.0): the audit must see it."""
    v = torch.tensor([0.3, -0.75, 2.0])
    flags = _flags(lambda: torch.median(v.expand(3, -1), 0))
    assert any(f.startswith("aten.median.dim") for f in flags), (
        "torch.median over a stride-0 dim no longer reads outside its input: if torch fixed it, "
        f"pick another planted kernel for this test (flags: {flags})")


def test_audit_is_silent_on_generated_programs():
    """No kernel of 150 generated programs is flagged, except torch's known median bug."""
    from fuzzcomp.run.execute import DEFAULT_OPTIONS, _Runner, grad_inputs
    known = ("aten.median.dim", "aten.nanmedian.dim")
    flagged, calls = [], 0
    for seed in range(700_000, 700_150):
        c = generate(seed)
        r = _Runner(c, DEFAULT_OPTIONS)
        r = _Runner(c, DEFAULT_OPTIONS, grad_inputs(c, DEFAULT_OPTIONS, r.namespace), r.namespace)
        for call in c.calls:
            with KernelAudit() as audit:
                r.run(r.fn, call)
            calls += 1
            flagged += [(seed, f) for f in audit.flagged if not f.startswith(known)]
    assert calls > 300
    assert not flagged, flagged


V = TensorType(("s0",), "float32")


def _median_program(contiguous: bool):
    view = "{0}.expand(3, -1)" + (".contiguous()" if contiguous else "")
    return Program((Input("x", V),),
                   (Assign("m", "torch.median", f"torch.median({view}, 0).values", (Ref("x"),), V),
                    Assign("y", "mul", "torch.mul({0}, 2.0)", (Ref("m"),), V)),
                   ("y",), ("s0",))


def test_mismatch_in_a_call_with_an_eager_kernel_bug_is_not_blamed():
    """perturb_mul breaks the compiled mul; in the program whose eager median reads outside its
    input the call is unjudgeable (screened, recorded in stats); in the same program with the
    view made contiguous first, the planted fault is a finding."""
    found = {}
    for contiguous in (False, True):
        obs, verdicts = check(case(_median_program(contiguous), "fuzzcomp.planted:perturb_mul", sizes=((4,),)))
        found[contiguous] = (verdicts, obs.stats.get("eager_kernel_bugs", []))
    screened_verdicts, screened_kernels = found[False]
    assert screened_verdicts == [] and any(k.startswith("aten.median.dim") for k in screened_kernels)
    caught_verdicts, clean_kernels = found[True]
    assert clean_kernels == []
    assert "numeric" in {v.symptom for v in caught_verdicts}, caught_verdicts
