"""Factories in generated programs follow the case's device: a CUDA campaign's constant subgraph,
default-dtype factory and library-module features are built on the case's device (through a
tensor in scope, or the DEVICE name the runtime and the repros define), never on the CPU by
default; CPU programs keep their text. Nothing here needs a GPU: programs are generated and
emitted, and the repros rendered, without running them."""
from __future__ import annotations

import re

from fuzzcomp.findings.triage import BucketKey
from fuzzcomp.generators import emit, generate
from fuzzcomp.generators.build import GenConfig
from fuzzcomp.render.repro import render_long, render_repro
from fuzzcomp.run.case_tables import load_namespace

FACTORY = re.compile(r"torch\.(tensor|zeros|ones|linspace|arange|full|empty|eye)\((?:[^()]|\([^()]*\))*\)")


def _factories(src: str) -> list[str]:
    """Factories the program's code calls (module state is created as zeros and then loaded on
    the case's device by the runtime: those placeholders are left out)."""
    lines = [ln for ln in src.splitlines() if "Parameter(" not in ln and "register_buffer(" not in ln]
    return [m.group(0) for m in FACTORY.finditer("\n".join(lines))]


def _cases(cap: str, device: str, n: int = 12):
    cfg = GenConfig.for_device(device, force=(cap,))
    return [generate(seed, cfg).with_compile(device=device) for seed in range(n)]


def test_cuda_constant_subgraph_names_the_device():
    srcs = [emit(c.program) for c in _cases("constants", "cuda")]
    consts = [f for s in srcs for f in _factories(s) if f.startswith("torch.tensor([")]
    assert consts, "no constant subgraph generated"
    assert all("device=DEVICE" in f for f in consts), consts


def test_cuda_factories_all_carry_a_device():
    for cap in ("constants", "gstate", "nnlib"):
        for case in _cases(cap, "cuda"):
            for f in _factories(emit(case.program)):
                assert "device=" in f, (cap, case.seed, f)


def test_cpu_programs_unchanged():
    for cap in ("constants", "gstate", "nnlib"):
        for seed in range(12):
            cpu = emit(generate(seed, GenConfig(force=(cap,))).program)
            assert "DEVICE" not in cpu and "device=self." not in cpu
            assert emit(generate(seed, GenConfig.for_device("cpu", force=(cap,))).program) == cpu
            # a CUDA program is the CPU one with device arguments added, nothing else drawn differently
            cuda = emit(generate(seed, GenConfig(force=(cap,), device="cuda")).program)
            strip = lambda src: re.sub(r", device=(DEVICE|[\w.]+\.device)", "", src)  # noqa: E731
            assert strip(cuda) == strip(cpu) and cuda.count("device=") >= cpu.count("device="), (cap, seed)


def test_runtime_and_repros_define_device(monkeypatch):
    import fuzzcomp.render.repro as repro
    # the short form asks eager for the oracle's settings: on this GPU-less box, fixed ones
    monkeypatch.setattr(repro, "_oracle_settings", lambda case: ([], None, {"floor_eps": 0.0, "reduce_n": 1,
                                                                           "coarse_eps": 0.0}))
    case = next(c for c in _cases("constants", "cuda") if "DEVICE" in emit(c.program))
    assert load_namespace(case)["DEVICE"] == "cuda"
    key = BucketKey("numeric", "inductor", "output values")
    short = render_repro(case, key, "detail")
    assert "DEVICE" in short and "DEVICE = 'cuda'" in short.split("def fn")[0], short
    long = render_long(case, key, "detail")
    assert "\nDEVICE = 'cuda'\n" in long  # a module global: fn reads it when called
    cpu = generate(case.seed, GenConfig(force=("constants",)))
    assert "DEVICE" not in render_repro(cpu, key, "detail")
