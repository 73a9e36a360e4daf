"""Compiler-signal feedback: signal extraction, choice-stream mutation, the seed pool, the flag."""
from __future__ import annotations

import json

import pytest

from fuzzcomp.run import compiler_signals as signals
from fuzzcomp.cli.parser import main
from fuzzcomp.base.config import ConfigError, RunConfig, validate
from fuzzcomp.report.coverage import signal_coverage
from fuzzcomp.campaign.feedback import POOL_FILE, Feedback, FeedbackError, regenerate
from fuzzcomp.generators import GenConfig, emit, generate, generate_from_choices, to_jsonable
from fuzzcomp.generators.mutate import mutant, recorded
from fuzzcomp.cli.settings_file import check as check_settings
from fuzzcomp.findings.store import Store


# ---- signals ------------------------------------------------------------------------------

def test_signals_of_a_small_compiled_function():
    import torch
    import torch._dynamo
    from torch._dynamo.utils import counters
    signals.install()
    torch._dynamo.reset()
    counters.clear()
    signals.begin()

    def fn(x, y):
        a = torch.relu(x) * y + 1
        torch._dynamo.graph_break()
        return a.sum(1), torch.sort(x, dim=1).values

    x = torch.randn(4, 16)
    torch.compile(fn, backend="inductor")(x, torch.randn(4, 16))
    got = signals.collect()
    assert got == sorted(set(got))
    kinds = {s.split(":")[0] for s in got}
    assert {"dynamo", "graph_break", "kernel", "lowered", "cpp"} <= kinds, got
    assert any(s.startswith("guard:TENSOR_MATCH") for s in got) or "_hook_guards" in signals._state["broken"]
    assert "lowered:relu:vec" in got and "fallback:aten.sort" in got, got
    assert "cpp:vec" in got and "cpp:vec:float" in got, got   # 16 floats a row: a vectorised loop
    assert any(s.startswith("graph_break:") and "[gb" in s for s in got), got
    signals.begin()  # a new case forgets the old one's code, guards and pattern hits
    assert not signals._state["codes"] and not signals._state["guards"]


def test_code_signals_tell_vectorised_from_scalar_and_normalise_names():
    code = ("# AOT ID: ['3_forward']\n"
            "cpp_fused_add_mul_0 = async_compile.cpp_pybinding(['float*'], r'''\n"
            "auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0); float tmp_acc0 = 0;\n'''\n)\n"
            "cpp_fused_abs_1 = async_compile.cpp_pybinding(['long*'], r'''\n"
            "for(int64_t x0=0; x0<7; x0++) { out_ptr0[x0] = std::abs(in_ptr0[x0]); }\n'''\n)\n"
            "buf1 = torch.ops.aten.sort.stable(arg0_1)\nbuf2 = extern_kernels.mm(a, b)\n")
    got = signals.code_signals(code)
    assert {"aot:forward", "kernel:cpp_fused:ops:2", "kernel:cpp_fused:ops:1", "lowered:abs:scalar",
            "lowered:add:vec", "lowered:mul:vec",
            "cpp:vec", "cpp:vec:float", "cpp:scalar", "cpp:reduction:scalar", "fallback:aten.sort",
            "extern:mm"} <= got, got
    assert signals._norm("Graph break in `foo` at line 12\n more") == "Graph break in _ at line N"
    assert signals._bucket(1) == "1" and signals._bucket(5) == "4+" and signals._bucket(300) == "256+"


def test_no_signals_for_a_case_that_never_compiled():
    class Obs:
        eager_valid, stats, timings = False, {}, {}
    obs, verdicts = signals.checked(lambda case: (Obs(), []), None)
    assert "signals" not in obs.stats and verdicts == []


# ---- mutation -----------------------------------------------------------------------------

def test_mutation_is_deterministic_and_replays_from_its_record():
    _, record, ranges = recorded(11)
    a, b = mutant(record, ranges, 5, 777), mutant(record, ranges, 5, 777)
    assert to_jsonable(a.case) == to_jsonable(b.case) and a.record == b.record and a.ops == b.ops
    again = generate_from_choices(list(a.record), 777)
    assert emit(again.program) == emit(a.case.program) and to_jsonable(again) == to_jsonable(a.case)
    others = {emit(mutant(record, ranges, s, 777).case.program) for s in range(6)}
    assert len(others) > 1                                   # different seeds, different mutants
    assert to_jsonable(recorded(11)[0]) == to_jsonable(generate(11))  # recording changes nothing


# ---- the pool -----------------------------------------------------------------------------

def _events_of(fb: Feedback, n: int, sigs) -> list[dict]:
    events = []
    for i in range(n):
        case = fb.case(i, 1000 + i)
        extra = fb.done(i, True, sigs(i))
        events.append({"event": "case", "index": i, "seed": case.seed, "valid": True, "t": float(i),
                       "signals": sigs(i), **extra})
        if "choices" in extra:  # the event alone rebuilds a mutant
            assert to_jsonable(regenerate(events[-1])) == to_jsonable(case)
    return events


def test_pool_keeps_new_signals_mutates_and_survives_resume(tmp_path):
    sigs = lambda i: [f"s{i % 7}", "common", f"r{i % 3}"]  # noqa: E731
    fb = Feedback("on", 3, GenConfig(), tmp_path)
    events = _events_of(fb, 30, sigs)
    arms = {e["origin"]["arm"] for e in events}
    assert arms == {"fresh", "mutate"}
    assert events[0]["new_signals"] == 3 and events[0]["origin"] == {"arm": "fresh"}
    assert 1 < len(fb.pool) < 30                           # kept: the cases that brought something new
    fb.close()
    saved = json.loads((tmp_path / POOL_FILE).read_text())
    back = Feedback("on", 3, GenConfig(), tmp_path)
    back.load(events)
    assert back.pool == saved["pool"] == fb.pool and back.arms == fb.arms and back.counts == fb.counts
    assert back.tries == fb.tries and sum(fb.tries.values()) == 30
    # same pool, same counts: the next case is the same on both sides
    assert to_jsonable(back.case(30, 2030)) == to_jsonable(fb.case(30, 2030))


def test_feedback_off_is_the_blind_generator(tmp_path):
    fb = Feedback("off", 0, GenConfig(), tmp_path)
    assert to_jsonable(fb.case(4, 99)) == to_jsonable(generate(99))
    assert fb.done(4, True, ["a"]) == {} and not fb.pool
    fb.close()
    assert not (tmp_path / POOL_FILE).exists()


def test_signal_coverage_counts_distinct_and_once():
    evs = [{"event": "case", "index": 0, "t": 0.0, "signals": ["a", "b"]},
           {"event": "case", "index": 1, "t": 60.0, "signals": ["b", "c"], "origin": {"arm": "mutate"}},
           {"event": "case", "index": 1, "t": 61.0, "signals": ["z"]}]  # a re-logged index counts once
    cov = signal_coverage(evs)
    assert cov["distinct"] == 3 and cov["once"] == 2 and cov["arms"] == {"mutate": 1}
    assert cov["series"] == [(0.0, 2, 2), (1.0, 3, 2)]


# ---- the flag -----------------------------------------------------------------------------

def test_feedback_flag_validation(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--cases", "1", "--feedback", "maybe", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--feedback must be off or on" in err[0]
    with pytest.raises(ConfigError):
        validate(RunConfig(out=str(tmp_path / "o"), cases=1, feedback="yes"))
    assert validate(RunConfig(out=str(tmp_path / "o"), cases=1, feedback="on")).feedback == "on"
    assert RunConfig(out="x").feedback == "off"                         # off by default
    assert check_settings({"feedback": "on"}, "fuzzcomp.toml") == {"feedback": "on"}
    with pytest.raises(FeedbackError):
        Feedback("sometimes", 0, GenConfig())


def test_feedback_on_resume_with_a_corrupt_pool_says_so(tmp_path):
    (tmp_path / POOL_FILE).write_text("{not json")
    with pytest.raises(FeedbackError, match="unreadable"):
        Feedback("on", 0, GenConfig(), tmp_path).load([])
    assert Store(tmp_path).root == tmp_path


@pytest.mark.slow
def test_guided_campaign_logs_origins_and_resumes_its_pool(tmp_path, cli):
    out = tmp_path / "c"
    r = cli("run", "--cases", "4", "--jobs", "1", "--backend", "aot_eager", "--feedback", "on",
            "--no-minimize", "--quiet", "--out", out)
    assert r.returncode in (0, 1), r.stderr
    cases = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()
             if '"event": "case"' in x]
    assert all("origin" in e for e in cases) and any(e.get("signals") for e in cases)
    assert (out / POOL_FILE).exists()
    pool = json.loads((out / POOL_FILE).read_text())["pool"]
    r = cli("run", "--cases", "7", "--jobs", "1", "--backend", "aot_eager", "--feedback", "on",
            "--no-minimize", "--quiet", "--resume", out)
    assert r.returncode in (0, 1), r.stderr  # 1: aot_eager met a real bug (findings exist)
    after = json.loads((out / POOL_FILE).read_text())["pool"]
    assert [e["index"] for e in after[:len(pool)]] == [e["index"] for e in pool]
    assert "compiler signals" in cli("report", out).stdout


def test_a_replayed_value_past_its_range_wraps_and_does_not_force_the_largest_choice():
    """A mutation that shifts a wide draw (a value seed) onto a rare feature's coin must leave the
    coin as rare as it was: the clamp it replaced made every such boolean true."""
    from fuzzcomp.generators.choices import ChoiceStream
    import random
    rng = random.Random(0)
    wide = [rng.randrange(2 ** 31) for _ in range(4000)]
    ch = ChoiceStream(replay=wide)
    hits = sum(ch.boolean(0.01) for _ in wide)
    assert hits < 100, hits          # about 1% true, not all of them
    ch = ChoiceStream(replay=[5, 12, -3, 999])
    assert [ch.integer(0, 9) for _ in range(4)] == [5, 2, 0, 9]
