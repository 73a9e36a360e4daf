"""The CUDA path: Triton codegen, CUDA graphs, the cross-device oracle.

The device tests need a CUDA GPU and skip with a visible reason elsewhere (CI has
none); the cross-device rule itself is tested on synthetic values everywhere.
"""
from __future__ import annotations

import json
import types

import pytest
import torch

from fuzzcomp.cli.parser import main
from fuzzcomp.oracles.judge import judge_cross_device
from fuzzcomp.oracles.observation import CallRecord

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA GPU (none on this machine); run on the device")


def _outcome(*values):
    return types.SimpleNamespace(values=list(values), labels=[f"output[{i}]" for i in range(len(values))],
                                 error=None)


def _rec(cpu, dev_eager, compiled, ref):
    return CallRecord(_outcome(dev_eager), _outcome(dev_eager), _outcome(ref), _outcome(compiled),
                      [], _outcome(cpu))


def test_cross_device_rule_both_ways():
    g = torch.Generator().manual_seed(0)
    ref = torch.rand(256, generator=g, dtype=torch.float64)
    cpu = ref.float()
    dev = (ref * (1 + 1e-7)).float()        # another device's kernel: tiny, legitimate difference
    assert judge_cross_device(0, _rec(cpu, dev, dev.clone(), ref)) == []
    bad = judge_cross_device(0, _rec(cpu, dev, dev * 1.001, ref))
    assert bad and bad[0].oracle == "cross-device" and "vs CPU eager" in bad[0].detail


def _campaign(tmp_path, *args):
    out = tmp_path / "camp"
    code = main(["run", "--device", "cuda", "--quiet", "--out", str(out), *args])
    s = json.loads((out / "summary.json").read_text())
    assert code == (1 if s["findings"] else 0)  # `run` exits 1 when it has findings
    return s


@needs_cuda
def test_cuda_planted_triton_relu_bug_is_found(tmp_path):
    s = _campaign(tmp_path, "--cases", "30", "--jobs", "2", "--backend", "fuzzcomp.planted:inductor_relu_bug",
                  "--minimize-budget", "90")
    why = json.dumps({k: s.get(k) for k in ("cases", "valid", "findings", "harness_errors", "buckets",
                                             "stop_reason")}, default=str)[:4000]
    assert s["findings"] >= 1 and s["harness_errors"] == 0, why
    assert any(b["confirmed"] for b in s["buckets"].values()), why


@needs_cuda
@pytest.mark.parametrize("mode", ["default", "reduce-overhead", "max-autotune-no-cudagraphs"])
def test_cuda_modes_run_on_inductor(tmp_path, mode):
    """Triton codegen, CUDA graphs (reduce-overhead) and GEMM autotuning run through the harness;
    whatever they find must be confirmed in a fresh process to count."""
    s = _campaign(tmp_path, "--cases", "10", "--jobs", "4", "--backend", "inductor", "--mode", mode,
                  "--minimize-budget", "60")
    assert s["cases"] == 10 and s["valid_rate"] >= 0.9 and s["harness_errors"] == 0


@needs_cuda
def test_module_state_moves_to_the_device():
    """Module parameters are built on the CPU when the program's source runs; loading the call's
    seeded state must move them to the GPU even when dtype and shape already match (it once
    copied CUDA values into CPU parameters, so eager mixed devices: invalid cases and false
    "gradient device" crashes)."""
    from fuzzcomp.run.runtime import load_state
    model = torch.nn.Linear(3, 2)
    model.weight.grad = torch.ones(2, 3)
    ns = {"MODEL": model}
    specs = [("MODEL.weight", (2, 3), "float32", "param"), ("MODEL.bias", (2,), "float32", "param")]
    load_state(ns, specs, {}, 0, device="cuda")
    assert model.weight.device.type == "cuda" and model.bias.device.type == "cuda"
    assert model.weight.grad is None
    load_state(ns, specs, {}, 1, device="cuda")  # later calls copy in place, on the device
    assert model.weight.device.type == "cuda"


def test_cuda_generator_config_has_no_random_ops():
    """On CUDA eager's fused dropout draws a different mask from Inductor's decomposed RNG even
    under fallback_random (a dropout program gave a false 'output values' finding on the H200), so
    CUDA campaigns generate no random ops; CPU campaigns keep them."""
    from fuzzcomp.generators import generate
    from fuzzcomp.generators.build import RANDOM_OPS, GenConfig
    from fuzzcomp.generators.ir import op_names
    from fuzzcomp.generators.registry import REGISTRY
    assert RANDOM_OPS <= {op.name for op in REGISTRY}
    cuda, cpu = GenConfig.for_device("cuda"), GenConfig.for_device("cpu")
    assert not cuda.random_ops and cuda.half_weight == 3.0 and cpu == GenConfig()
    used_cuda = set().union(*(op_names(generate(s, cuda).program) for s in range(400)))
    used_cpu = set().union(*(op_names(generate(s, cpu).program) for s in range(400)))
    assert not (used_cuda & RANDOM_OPS) and (used_cpu & RANDOM_OPS)
