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


# ---- the zero-sign audit ---------------------------------------------------------------------------
SMALL_NEGATIVES = torch.tensor([-0.15, -0.01, 0.2, -0.3, -1.0, -0.2, 0.1, -0.4, -0.05, -0.3, -0.2, -0.1,
                                -0.25, -0.35, -0.45, -0.49, -0.2, -0.3])  # 18: vector lanes, then a tail


def test_zero_sign_audit_catches_softshrink_and_no_kernel_that_keeps_its_sign():
    """Eager's CPU softshrink gives +0.0 in its vector lanes and -0.0 in its scalar loop for a
    small negative input (CPU campaign 1518's only 'new' bucket, numeric-autograd-90c33812, was
    compiled's consistent -0.0 against eager's vector lanes); mul by zero, neg, where, clamp,
    hardshrink and relu give one sign whatever the path."""
    from fuzzcomp.run.kernel_audit import ZeroSignAudit
    F = torch.nn.functional
    x = SMALL_NEGATIVES
    with ZeroSignAudit() as audit:
        F.softshrink(x, 0.5)
        F.softshrink(x[:16].view(8, 2).t(), 0.5)  # the finding's transposed (2, 8) form
    assert audit.flagged == ["aten.softshrink.default: gives either sign of zero (its vector lanes "
                             "against its scalar loop)"]
    with ZeroSignAudit() as audit:
        out = [x * 0, torch.neg(x * 0), torch.where(x > 0, x, x * 0), torch.clamp(x, min=0.0),
               F.hardshrink(x, 0.5), torch.relu(-x.abs()), F.softshrink(x[:3], 0.5)]  # 3: scalar loop only
    assert audit.flagged == [] and out[0].signbit().any()  # results are eager's own, unchanged


def test_zero_sign_audit_names_the_values_a_flagged_kernel_reaches():
    """The scope of eager's either-zero kernel is what its result flows into: through a view, an
    in-place write into another tensor and later ops; a value computed beside it stays judged.
    A tainted value read into Python (item) can reach anything after it: every value."""
    from fuzzcomp.run.kernel_audit import ZeroSignAudit
    F = torch.nn.functional
    x = SMALL_NEGATIVES

    class Out:
        def __init__(self, pairs):
            self.labels, self.values, self.error = [p[0] for p in pairs], [p[1].clone() for p in pairs], None
    with ZeroSignAudit() as audit:
        s = F.softshrink(x, 0.5)
        beside = torch.neg(x * 0)
        sink = torch.zeros_like(x)
        sink.add_(s.view(2, -1).reshape(-1))
        after = torch.relu(sink) * 2
        out = Out([("output[0]", beside), ("output[1]", after), ("input x after call", x), ("output[2]", s[:4])])
    assert audit.flagged and audit.reached(out) == ["output[1]", "output[2]"]
    with ZeroSignAudit() as audit:
        s = F.softshrink(x, 0.5)
        scale = float(s.sum().item())
        out = Out([("output[0]", torch.neg(x * 0) * scale)])
    assert audit.reached(out) is None
    with ZeroSignAudit() as audit:
        out = Out([("output[0]", torch.neg(x * 0))])
    assert audit.flagged == [] and audit.reached(out) == []


def _sign_case(sign_open, reached=None):
    from fuzzcomp.oracles.observation import CallRecord
    from fuzzcomp.oracles.special import judge_special

    class Out:  # an Outcome's fields the exact rule reads
        def __init__(self, v):
            self.values, self.labels, self.error = [v], ["output[0]"], None
    e = torch.tensor([0.0, 1.5, 0.0])
    rec = CallRecord(Out(e), Out(e.clone()), Out(e.double()), Out(torch.tensor([-0.0, 1.5, 0.0])))
    rec.eager_sign_open, rec.eager_sign_reached = sign_open, reached
    obs = type("Obs", (), {"calls": [rec], "stats": {"special_calls": [0], "special_sign_labels": ["output[0]"]}})
    return [v.detail for v in judge_special(obs, [])]


def test_a_flipped_zero_is_judged_unless_eager_s_kernel_gives_either_sign():
    assert _sign_case([]) == ["output[0]: 1 zeros change sign compiled; first at [0]: eager=0.0 compiled=-0.0"]
    assert _sign_case(["aten.softshrink.default: gives either sign of zero"]) == []
    # the kernel reaches another value only: this one's flipped zero is still the compiler's
    assert _sign_case(["aten.softshrink.default: gives either sign of zero"], ["output[1]"]) == \
        _sign_case([])
    assert _sign_case(["aten.softshrink.default: gives either sign of zero"], ["output[0]"]) == []


# CPU campaign 1518's minimised finding (numeric-autograd-90c33812): softshrink(x2, 0.5) of a
# transposed (2, 8) float32 input requiring grad; eager's vector lanes give +0.0 for its small
# negatives, the compiled graph (which computes a * 0 as the scalar loop does) -0.0.
SOFTSHRINK_CASE = (
    "eNq9VE2P2jAQ/StRLstKIUpCkVKkHqqeeqvava1QZJIJWDh26g9aivjvnbEDZHez6h5WvUD8PDN+73nGp7iy8SqKvzADcRLF"
    "NRPCIHBC3PUC8PPxdI0R4hID+lnQ+ow7W6E27EV+2NKsqTrVEOIXVInLFjTIGioue2cpscV8wK2O6f1kIQ0/HddgKl9kFUkn"
    "BMIGWTE9mWEAKDCjT/4HXsacfVitup576Co4ID96qInthtV7kFQKiTeutkp7O5Rs+Xbq4AYOvPaC695RaHOUrOP1jXWLf6ij"
    "342VB5MowhsHEjTDs6oDaMOVpHpZmmdUsNcK07sR528DQnxVc3zlKj8bw7eSgpjeTpqmes9bSWNXFqQJWpXz6YeCFha6XjDr"
    "BSK/epeGwNljKxSzszvJ5N19Eg0rvOzRaj4s51mKF+N/FmkGizKJ8rSAOX3M83SZREWarZOosccePoVjfIlFce9JIDyS/+AZ"
    "PBBIfg+78ZBBmNmxa8ZF8UfsART9JncuQd+hpQi8UH/C7yI+j4wLRKVMWydri7fGRGpUa81Oc7kfW1lOW/la6uyUncmv5fup"
    "L5KoJAP+NcI7ED1Mj9h1fKec+kqb3k3BmalUS2CYHCftMJl7Hibr1muCHQePsAst3zrlzBPH83jiObhMkcGh5UyMkHfxak19"
    "Eh84/PIiRk0zpXKY8rfqtJpJ0ysDzbPO+v86h54YaTVEJ/QIvlBOwE3fhWkrh8aurip9vQBOdMjQ/eEmg058WsKjfew2aqIP"
    "Rw96vszLLPtQ5uX5L3NgFak=")


@pytest.mark.slow
def test_campaign_1518_softshrink_zero_sign_is_eager_s_own_and_silent():
    from fuzzcomp.generators import from_jsonable
    from fuzzcomp.render.shortrepro import CASE_PREFIX, case_from_text
    c = from_jsonable(case_from_text(CASE_PREFIX + SOFTSHRINK_CASE))
    obs, verdicts = check(c)
    assert verdicts == [], verdicts
    assert any(k.startswith("aten.softshrink") for k in obs.stats.get("eager_sign_open", [])), obs.stats


def _cpu1603():
    import json
    import pathlib
    from fuzzcomp.generators import from_jsonable
    data = json.loads((pathlib.Path(__file__).parent / "data" / "cpu1603_cross_entropy_zero_sign.json").read_text())
    return from_jsonable(data["case"])


def test_a_loss_s_zero_sign_is_not_judged():
    """CPU 1603's only 'new' bucket (numeric-inductor-bdb6d15c): cross_entropy of one class is
    -0.0 compiled (the negation after the mean) and 0.0 in eager (its mean starts from +0.0).
    A reduction's zero sign is not the compiler's to keep, so a loss's output is not among the
    values whose zero sign is judged; a neg of the input still is."""
    import dataclasses
    from fuzzcomp.generators.ir import Assign, Ref
    from fuzzcomp.run.call_extras import sign_labels
    case = _cpu1603()
    assert [s.op for s in case.program.body][-1] == "torch.nn.functional.cross_entropy"
    assert sign_labels(case) == []
    p = case.program
    neg = Assign("v9", "torch.neg", "torch.neg({0})", (Ref(p.body[0].out),), p.body[0].type)
    flipped = dataclasses.replace(case, program=dataclasses.replace(p, body=p.body + (neg,), outputs=p.outputs + ("v9",)))
    assert sign_labels(flipped) == ["output[1]"]


@pytest.mark.slow
def test_campaign_1603_cross_entropy_zero_sign_is_silent():
    obs, verdicts = check(_cpu1603())
    assert verdicts == [], verdicts
