"""The reduce-overhead harness follows CUDA-graph trees' rules: a new step before every compiled
call, outputs cloned as the call returns, grads set to None between calls."""
import pytest
import torch

from fuzzcomp.run.execute import _Runner, DEFAULT_OPTIONS, uses_cudagraphs
from fuzzcomp.run.runtime import mark_step_begin, run_scheduled

from oracle_cases import case, mul_relu


@pytest.fixture
def steps(monkeypatch):
    count = []
    monkeypatch.setattr(torch.compiler, "cudagraph_mark_step_begin", lambda: count.append(1), raising=False)
    return count


def test_mark_step_begin_is_detected_and_called(steps, monkeypatch):
    assert mark_step_begin() and len(steps) == 1
    spec = [("x", (3,), "float32", "contiguous")]
    run_scheduled({}, lambda x: x * 2, spec, [], (), ((), 0), step_begin=True)
    run_scheduled({}, lambda x: x * 2, spec, [], (), ((), 0))
    assert len(steps) == 2
    monkeypatch.delattr(torch.compiler, "cudagraph_mark_step_begin")
    assert mark_step_begin() is False   # an older torch: no step marking, no error


def test_compiled_calls_under_cudagraph_modes_start_a_step(steps):
    c = case(mul_relu(), "inductor", sizes=((3,), (4,))).with_compile(mode="reduce-overhead")
    assert uses_cudagraphs(c) and uses_cudagraphs(c.with_compile(mode="max-autotune"))
    assert not uses_cudagraphs(c.with_compile(mode=None)) and not uses_cudagraphs(c.with_compile(backend="aot_eager"))
    r = _Runner(c, DEFAULT_OPTIONS, ("x", "y"))
    for call in c.calls:
        r.run(r.fn, call)                   # eager reference runs: no step
    assert steps == []
    outs = [r.run(r.fn, call, phase="run") for call in c.calls]   # compiled runs: one step each
    assert len(steps) == 2
    # outputs are clones taken as the call returned: later calls cannot overwrite them
    assert all(o.values[0].untyped_storage().data_ptr() != o2.values[0].untyped_storage().data_ptr()
               for o in outs for o2 in outs if o is not o2)
    g = outs[0].labels.index("grad of input x")
    assert outs[0].values[g] is not None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: CUDA-graph replays only exist there")
def test_reduce_overhead_schedule_with_grads_is_silent_on_cuda():
    from fuzzcomp.run.execute import configure_torch
    from fuzzcomp.judge.check import check
    configure_torch()
    c = case(mul_relu(), "inductor", sizes=((4,), (4,), (4,))).with_compile(mode="reduce-overhead", device="cuda")
    obs, verdicts = check(c)
    assert obs.eager_valid and not verdicts, verdicts
