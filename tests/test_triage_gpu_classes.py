"""False-positive and identity classes read off an H200 campaign's buckets, each proven both ways.

- Cross-device judging (compiled CUDA against CPU eager) is silent where the two eagers disagree
  on what the value is (autocast casts different op lists on each device: bf16 on one, fp32 on
  the other) and on eager None against compiled zeros, and still catches a wrong value.
- A torch global left different after the call is bucketed by which global it is.
- A lost -0.0 is one bucket whatever op made the zero; other special-value mismatches keep
  their culprit op.
- Special values are never subnormal (GPU kernels flush them by design).
- A generated program has a source file as far as ``inspect`` can tell: torch before 2.13 wraps a
  function without one in ``wrap_inline`` (every program of a worker then shares one code object,
  and a crash showed in the worker that the same program in a file never shows).
"""
from __future__ import annotations

import types

import torch

from fuzzcomp.oracles import Verdict
from fuzzcomp.oracles.judge import judge_cross_device
from fuzzcomp.oracles.observation import CallRecord
from fuzzcomp.run.runtime import salt_special
from fuzzcomp.findings.triage import bucket_of


def _outcome(values, labels=None):
    return types.SimpleNamespace(values=list(values), error=None,
                                 labels=labels or [f"output[{i}]" for i in range(len(values))])


def _rec(cpu, dev, compiled, ref, labels=None):
    return CallRecord(_outcome(dev, labels), _outcome(dev, labels), _outcome(ref, labels),
                      _outcome(compiled, labels), [], _outcome(cpu, labels))


def test_cross_device_is_silent_where_the_eagers_disagree_on_dtype_and_still_catches_values():
    g = torch.Generator().manual_seed(1)
    ref = torch.rand(64, generator=g, dtype=torch.float64)
    cpu_bf16, dev_f32 = ref.bfloat16(), ref.float()   # autocast: bf16 on the CPU, fp32 on the GPU
    assert judge_cross_device(0, _rec([cpu_bf16], [dev_f32], [dev_f32.clone()], [ref])) == []
    wrong = judge_cross_device(0, _rec([ref.float()], [dev_f32], [dev_f32 * 1.01], [ref]))
    assert wrong and wrong[0].oracle == "cross-device"


def test_cross_device_none_against_zero_gradient_is_not_a_finding():
    labels = ["grad of input x0"]
    zeros = torch.zeros(4)
    assert judge_cross_device(0, _rec([None], [None], [zeros], [None], labels)) == []
    bad = judge_cross_device(0, _rec([torch.ones(4)], [torch.ones(4)], [torch.ones(4) * 3],
                                     [torch.ones(4, dtype=torch.float64)], labels))
    assert bad and bad[0].label == labels[0]


def _state(eager, compiled):
    return Verdict("mutation", "autograd", "fp64-rule",
                   f"state torch globals after call: eager='{eager}' compiled='{compiled}'", 0,
                   "state torch globals after call", "culprit op: unknown")


def test_global_state_buckets_name_the_global():
    base = "grad=True deterministic=False warn_only=False default_dtype=torch.float32"
    grad = _state(base.replace("grad=True", "grad=False"), base)
    det = _state(base.replace("deterministic=False", "deterministic=True"), base)
    det2 = _state(base.replace("deterministic=False", "deterministic=True"), base)
    dtype = _state(base.replace("float32", "float64"), base)
    keys = {bucket_of(v) for v in (grad, det, dtype)}
    assert len(keys) == 3 and bucket_of(det) == bucket_of(det2)
    assert bucket_of(det).signature == "torch globals: deterministic"


def _special(detail, culprit):
    return Verdict("numeric", "inductor", "exact-special", f"output[1]: {detail}", 0, "output[1]",
                   f"culprit op: {culprit}")


def test_lost_negative_zero_is_one_bucket_other_special_mismatches_keep_their_op():
    a = _special("1 zeros change sign compiled; first at [3]: eager=-0.0 compiled=0.0", "const:*0.")
    b = _special("1 zeros change sign compiled; first at [3]: eager=-0.0 compiled=0.0", "torch.sqrt")
    c = _special("1 elements where eager and fp64 are -inf differ in class compiled; first at [3]: "
                 "eager=-inf compiled=inf", "const:torch.reciprocal")
    assert bucket_of(a) == bucket_of(b) == bucket_of(c)
    n1 = _special("1 elements where eager and fp64 are NaN differ in class compiled; first at [6]: "
                  "eager=nan compiled=0.0", "const:*0.")
    n2 = _special("1 elements where eager and fp64 are +inf differ in class compiled; first at [8]: "
                  "eager=inf compiled=nan", "torch.exp")
    assert len({bucket_of(n1), bucket_of(n2), bucket_of(a)}) == 3


def test_special_values_are_never_subnormal():
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        t = salt_special(torch.randn(4096, generator=torch.Generator().manual_seed(0)).to(dtype), 3)
        fi = torch.finfo(torch.float32 if dtype == torch.float64 else dtype)
        a = t.abs()
        assert not bool(((a > 0) & (a < fi.tiny)).any()), dtype
        assert bool((a == fi.tiny).any()) and bool((a == fi.max).any()), dtype
        assert bool(t.isnan().any()) and bool(torch.signbit(t[t == 0]).any()) and bool(t.isinf().any())


def test_float64_salts_leave_room_for_a_reordered_product():
    """A campaign filed addcmul(x, log_softmax(x), x, value=0.5) on float64 inputs salted with
    float64's largest value: Inductor's t1*t2 before the scale overflowed where eager's order did
    not. With float32's extremes in float64, any product of two salted values stays finite."""
    t = salt_special(torch.randn(4096, generator=torch.Generator().manual_seed(1)).double(), 5)
    finite = t[t.isfinite()]
    big = finite.abs().max()
    assert big == torch.finfo(torch.float32).max and torch.isfinite(big * big * 0.5)
    assert not bool((finite.abs() > torch.finfo(torch.float32).max).any())


def _special_obs(reduce_n):
    e = torch.tensor([0.269, 1.0])
    rec = CallRecord(_outcome([e]), _outcome([e]), _outcome([e.double()]), _outcome([torch.tensor([0.0159, 1.0])]))
    return types.SimpleNamespace(calls=[rec], stats={"special_calls": [0], "reduce_n": reduce_n})


def test_sums_over_special_values_are_not_judged_by_the_fp64_rule():
    """A sum over +-max, inf and NaN depends on its order and the fp64 run does not overflow: a
    campaign's 'rmse vs fp64' finding of that kind was summation order (CPU, 30-minute run)."""
    from fuzzcomp.oracles.special import judge_special
    v = Verdict("numeric", "unknown", "fp64-rule", "output[0]: rmse vs fp64: compiled 0.08 > ...", 0,
                "output[0]")
    assert judge_special(_special_obs(reduce_n=31), [v]) == []
    assert judge_special(_special_obs(reduce_n=1), [v]) == [v]   # no sum: still a finding


def test_a_generated_program_has_a_source_file_so_torch_compiles_it_as_the_root_frame():
    import inspect
    import linecache

    from fuzzcomp.generators import GenConfig, generate
    from fuzzcomp.run import case_tables

    fns = [case_tables.load_program(generate(seed, GenConfig())) for seed in range(3)]
    for fn in fns:  # torch 2.11/2.12 wrap the function in wrap_inline where this is None
        assert inspect.getsourcefile(fn) == fn.__code__.co_filename
        assert inspect.getsource(fn).startswith("def fn(")
    linecache.cache.pop(fns[0].__code__.co_filename)  # the registration is what makes it so
    assert inspect.getsourcefile(fns[0]) is None
    for seed in range(100, 100 + 2 * case_tables._SOURCES_KEPT):  # a long-lived worker keeps a few
        case_tables.load_program(generate(seed, GenConfig()))
    ours = [k for k in linecache.cache if str(k).startswith("<fuzzcomp seed ")]
    assert len(ours) <= case_tables._SOURCES_KEPT


def test_a_float64_value_where_only_the_device_eager_is_off_is_not_the_compilers():
    """H200 seed 1309: hardswish of a 0-dim float64 CUDA tensor, eager 1.5293055812095666,
    compiled 1.5293055356327099, which is the exact value (and the CPU's eager). float64's "fp64
    run" is eager itself, so only the CPU's eager can tell which of the two is off."""
    from fuzzcomp.oracles.judge import _judge_values
    exact = torch.tensor(1.5293055356327099, dtype=torch.float64)
    off = torch.tensor(1.5293055812095666, dtype=torch.float64)
    assert _judge_values("inductor", 0, _rec([exact], [off], [exact], [off])) == []
    # compiled off where both eagers agree: still the compiler's
    (v,) = _judge_values("inductor", 0, _rec([exact], [exact], [off], [exact]))
    assert v.symptom == "numeric" and v.oracle == "fp64-rule"
    # no CPU run (a CPU campaign), or compiled off from both: flagged as before
    rec = _rec([exact], [off], [exact], [off])
    rec.cpu_eager = None
    assert len(_judge_values("inductor", 0, rec)) == 1
    third = torch.tensor(1.5293056, dtype=torch.float64)
    assert len(_judge_values("inductor", 0, _rec([exact], [off], [third], [off]))) == 1
    # float32 has its fp64 reference: the CPU witness plays no part there
    e32, c32 = torch.tensor(1.0), torch.tensor(1.001)
    assert len(_judge_values("inductor", 0, _rec([c32], [e32], [c32], [e32.double()]))) == 1


def test_a_gradient_at_a_nan_input_is_not_judged_and_the_rest_of_it_is():
    """Seed 1401's softshrink bucket printed, as its bug, a gradient at a NaN input element: eager
    1, compiled 0. Eager's own CPU softshrink backward gives 0 in its vector lanes and 1 in the
    scalar tail there (#195075), so no run is a witness at a NaN input; the other elements are."""
    from fuzzcomp.oracles.judge import _judge_values
    x = torch.tensor([0.3, float("nan"), 2.0, -1.0], dtype=torch.float64)
    labels = ["output[0]", "input x after call", "grad of input x"]
    out = torch.tensor([0.0, float("nan"), 1.5, -0.5], dtype=torch.float64)
    eager_grad = torch.tensor([0.0, 1.0, 1.0, 1.0], dtype=torch.float64)

    def rec(grad):
        return CallRecord(_outcome([out, x, eager_grad], labels), _outcome([out, x, eager_grad], labels),
                          _outcome([out, x, eager_grad], labels), _outcome([out, x, grad], labels), [], None)
    at_nan = eager_grad.clone()
    at_nan[1] = 0.0
    assert _judge_values("inductor", 0, rec(at_nan)) == []
    wrong = eager_grad.clone()
    wrong[2] = 0.0
    assert [v.label for v in _judge_values("inductor", 0, rec(wrong))] == ["grad of input x"]
