"""Warm-cache cases (``compile.cache = "warm"``): Inductor's FX-graph and AOTAutograd caches on, a
cold compile in the worker, then a second process served from the cache, judged again.

Default tests here run no compile: the setting is drawn last (every program stays byte for byte),
replays from JSON, shows in features, capabilities and the report, and the warm verdicts (only
the warm run raises it, or its bits leave the cold compile's) get stage ``cache``. The slow tests
prove it both ways in a real worker: a planted fault in the FX-graph cache's load path is flagged
at stage ``cache`` (and its two-process repro exits 1), while real Inductor is silent on the same
cases and the planted backend is silent with the caches off."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
import torch

from fuzzcomp.generators import GenConfig, from_jsonable, generate, to_jsonable
from fuzzcomp.generators.capabilities import has, table
from fuzzcomp.generators.edges import EDGE_CAPABILITIES
from fuzzcomp.generators.features import features
from fuzzcomp.generators.ir import op_names
from fuzzcomp.oracles import Verdict
from fuzzcomp.oracles.observation import CallRecord
from fuzzcomp.run.runtime import Outcome
from fuzzcomp.workers import warm_cache

WARM = GenConfig(force=("warm_cache",))


def test_setting_is_drawn_last_and_keeps_every_program():
    # the edges (generators.edges) are drawn after it, so they follow its draw: off in both
    no_edges = tuple((c, 0.0) for c in EDGE_CAPABILITIES)
    off = GenConfig(reach_weights=(("warm_cache", 0.0),) + no_edges)
    warm = 0
    for seed in range(150):
        case, plain = generate(seed, GenConfig(reach_weights=no_edges)), generate(seed, off)
        warm += case.compile.cache == "warm"
        assert plain.compile.cache == ""
        assert case.with_compile(cache="") == plain, seed
    assert 1 <= warm <= 20  # weight 0.04 of 150 cases


def test_setting_replays_and_is_a_listed_capability():
    case = generate(3, WARM)
    assert case.compile.cache == "warm"
    assert from_jsonable(to_jsonable(case)) == case
    old = to_jsonable(case)
    del old["compile"]["cache"]  # a finding stored before the setting existed replays cold
    assert from_jsonable(old).compile.cache == ""
    assert "cache" not in to_jsonable(case.with_compile(cache=""))["compile"]  # stored cases keep their bytes
    assert "warm_cache" in features(case) and "warm_cache" in has(case)
    assert "warm_cache" not in has(case.with_compile(cache=""))
    row = next(c for c in table(GenConfig()) if c.name == "warm_cache")
    assert row.kind == "setting" and 0 < row.weight < 0.1


def test_only_inductor_backends_get_the_warm_run():
    case = generate(3, WARM)
    assert warm_cache.applies(case) and warm_cache.applies(case.with_compile(backend="m:f"))
    assert not warm_cache.applies(case.with_compile(backend="aot_eager"))
    assert not warm_cache.applies(case.with_compile(cache=""))


def _out(*values, error=None):
    return Outcome(list(values), [f"output[{i}]" for i in range(len(values))], error)


def _record(cold, eager=None):
    eager = eager or _out(torch.ones(3))
    return CallRecord(eager, eager, None, cold)


def test_twin_flags_warm_bits_that_leave_the_cold_compile():
    cold = _out(torch.tensor([1.0, 2.0, 3.0]), 4)
    same = _out(torch.tensor([1.0, 2.0, 3.0]), 4)
    moved = _out(torch.tensor([1.0, 2.0, 3.001]), 4)
    assert warm_cache.twin_verdicts([_record(cold)], [same]) == []
    (v,) = warm_cache.twin_verdicts([_record(cold)], [moved])
    assert (v.symptom, v.stage, v.call, v.label) == ("numeric", "cache", 0, "output[0]")
    # eager that does not repeat itself proves nothing; nor does a call that failed
    shaky = CallRecord(_out(torch.ones(3)), _out(torch.zeros(3)), None, cold)
    assert warm_cache.twin_verdicts([shaky], [moved]) == []
    assert warm_cache.twin_verdicts([_record(cold)], [_out(error=("E", "m", "t"))]) == []


def test_warm_only_verdicts_are_restaged_to_cache():
    cold = [Verdict("numeric", "inductor", "fp64-rule", "output[0]: x", call=0, label="output[0]")]
    warm = cold + [Verdict("gradient", "inductor", "fp64-rule", "grad of input x0: y", call=1,
                           label="grad of input x0")]
    (v,) = warm_cache.warm_only(cold, warm)
    assert (v.symptom, v.stage, v.call) == ("gradient", "cache", 1)
    assert v.detail.startswith("grad of input x0: y")  # the bucket's kind reads the detail's head


def _checked(answer, control=None):
    """``WarmCache.checked`` with a stand-in cold check and helper answers (nothing compiles): the
    warm run's, then (asked only for a twin) the control's, a fresh compile in that process."""
    from fuzzcomp.oracles import Observation
    from fuzzcomp.run.execute import ExecOptions
    w = warm_cache.WarmCache()
    answers = iter([answer, control or ("done", [], [_out(torch.tensor([1.0, 2.0]))], {})])
    w._ask = lambda payload: next(answers)
    obs = Observation("inductor", [_record(_out(torch.tensor([1.0, 2.0])))], {}, {})
    case = next(c for c in (generate(s, WARM) for s in range(3, 60))  # no atomic-order op to leave alone
                if not warm_cache.atomic_order("output[0]", torch.ones(1), op_names(c.program)))
    return w.checked(lambda case, options: (obs, []), case, ExecOptions())


def test_checked_judges_the_warm_answer_against_the_cold_run():
    obs, verdicts = _checked(("done", [], [_out(torch.tensor([1.0, 2.0]))], {"fxgraph_cache_hit": 1}))
    assert verdicts == [] and obs.stats["cache"]["helper"] == "ok"
    assert obs.stats["cache"]["warm"] == {"fxgraph_cache_hit": 1}
    obs, (v,) = _checked(("done", [], [_out(torch.tensor([1.0, 2.5]))], {}))
    assert (v.stage, v.oracle) == ("cache", "cache-twin")
    assert "cold compile's bits" in obs.stats["cache"]["twin_control"]
    # a warm process killed by a crash signal is a finding; one killed otherwise is only noted
    _obs, (v,) = _checked(("died", "the warm-cache helper died with exit code -11", -11))
    assert (v.symptom, v.stage) == ("segfault", "cache") and "SIGSEGV" in v.detail
    obs, verdicts = _checked(("died", "the warm-cache helper died with exit code -9", -9))
    assert verdicts == [] and "-9" in obs.stats["cache"]["helper"]


def test_case_folder_shares_kernels_but_not_graph_caches(tmp_path):
    shared = tmp_path / "shared"
    for name in ("ab", "fxgraph", "aotautograd", "locks"):
        (shared / name).mkdir(parents=True)
    folder = warm_cache.case_folder(str(shared))
    try:
        assert sorted(os.listdir(folder)) == ["ab", "locks"]
        assert os.path.islink(os.path.join(folder, "ab"))
    finally:
        import shutil
        shutil.rmtree(folder)
    assert (shared / "ab").is_dir()  # removing the case folder leaves the shared one


def test_report_and_repro_state_the_setting():
    from fuzzcomp.findings.triage import bucket_of
    from fuzzcomp.render.bugreport import report_title, _cache_setting
    from fuzzcomp.render.repro import render_repro
    case = generate(3, WARM)
    v = Verdict("numeric", "cache", "cache-twin", "call 0, output[0]: differs", call=0, label="output[0]")
    key = bucket_of(v)
    assert "warm FX-graph/AOTAutograd cache" in report_title(case, key, v.detail)
    assert "**on**" in _cache_setting(case) and _cache_setting(case.with_compile(cache="")) == ""
    text = render_repro(case, key, v.detail)
    assert 'os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = os.environ["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "1"' in text
    assert "FUZZCOMP_COLD_PROCESS" in text and "twin = _cold_twin(k, eager, again, comp)" in text
    assert text.index("FUZZCOMP_COLD_PROCESS") < text.index("\nimport torch\n")
    cold = render_repro(case.with_compile(cache=""), key, v.detail)
    assert "FUZZCOMP_COLD_PROCESS" not in cold and "_cold_twin" not in cold


# ---- slow: a real worker, real compiles -------------------------------------------------------
def _run_cases(backend: str, seeds, cache="warm"):
    from fuzzcomp.base.messages import CHECK, Job
    from fuzzcomp.workers.worker import Worker, WorkerSettings
    cfg = GenConfig(force=("warm_cache",), reach_weights=(("gstate", 0.0),))
    w = Worker(0, WorkerSettings(memory_mb=4096))
    w.start()
    try:
        out = []
        for s in seeds:
            case = generate(s, cfg).with_compile(backend=backend, cache=cache)
            out.append((case, w.run(Job(s, CHECK, case, timeout_s=900.0))))
        return out
    finally:
        w.stop()


@pytest.mark.slow
def test_planted_cache_fault_flagged_and_inductor_silent(tmp_path):
    # each has a float output the fault can reach (seed 2's program changed with generator wave 3's
    # merges: under this backend it now raises a saved-tensor error before any cached compile)
    seeds = (0, 1, 5)
    planted = _run_cases("fuzzcomp.planted:stale_cache_bug", seeds)
    for case, r in planted:
        assert r.status == "done" and r.valid, r.message
        assert r.stats["cache"]["helper"] == "ok"
        assert any(k.startswith("fxgraph_cache_hit") for k in r.stats["cache"]["warm"]), r.stats["cache"]
        assert r.verdicts and all(v.stage == "cache" for v in r.verdicts), r.verdicts
    real = _run_cases("inductor", seeds)
    assert all(r.status == "done" and r.verdicts == [] and r.stats["cache"]["helper"] == "ok"
               for _c, r in real), [(c.seed, r.verdicts) for c, r in real]
    off = _run_cases("fuzzcomp.planted:stale_cache_bug", seeds, cache="")  # caches off: no fault
    assert all(r.status == "done" and r.verdicts == [] and "cache" not in r.stats for _c, r in off)
    # the finding's repro shows it: a cold first process, then a second one served from the cache
    from fuzzcomp.findings.triage import bucket_of
    from fuzzcomp.render.repro import render_repro
    case, r = planted[0]
    repro = tmp_path / "repro.py"
    repro.write_text(render_repro(case, bucket_of(r.verdicts[0]), r.verdicts[0].detail))
    with warnings.catch_warnings():
        run = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True, timeout=900)
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    assert run.stdout.splitlines()[0].startswith("first (cold) process: compiled matches eager")
    assert run.stdout.splitlines()[-1].startswith("BUG: ")


def test_a_twin_needs_its_control_and_leaves_atomic_float_sums_alone():
    """H200 1511's two cache-twin findings, both false: a scatter_add_ with repeated indices (atomic
    order, 1 ulp) and a TransformerEncoderLayer whose warm process computed other last bits than the
    cold one. The twin stands only where a fresh compile in the warm process gives the cold bits."""
    warm = ("done", [], [_out(torch.tensor([1.0, 2.5]))], {})
    obs, verdicts = _checked(warm, control=warm)  # the process, not the cache
    assert verdicts == [] and "not the cache's doing" in obs.stats["cache"]["twin_control"]
    obs, verdicts = _checked(warm, control=("error", "RuntimeError: boom"))
    assert verdicts == [] and obs.stats["cache"]["twin_control"].startswith("no answer")
    # float values an atomic-add kernel may sum in another order: not compared by bits
    cold = _out(torch.tensor([1.0, 2.0]), torch.tensor([3, 4]))
    moved = _out(torch.tensor([1.0, 2.5]), torch.tensor([3, 4]))
    assert warm_cache.twin_verdicts([_record(cold)], [moved], ["Tensor.scatter_add_", "torch.cos"]) == []
    assert warm_cache.twin_verdicts([_record(cold)], [moved], ["Tensor.gather", "torch.cos"])  # forward gather: no atomics
    int_moved = _out(torch.tensor([1.0, 2.0]), torch.tensor([3, 5]))
    # integer sums are exact
    (v,) = warm_cache.twin_verdicts([_record(cold)], [int_moved], ["Tensor.scatter_add_"])
    assert v.label == "output[1]"
    grad = Outcome([torch.tensor([1.0])], ["grad of input x0"], None)
    grad_moved = Outcome([torch.tensor([1.5])], ["grad of input x0"], None)
    assert warm_cache.twin_verdicts([_record(grad)], [grad_moved], ["Tensor.gather"]) == []  # its backward scatters
