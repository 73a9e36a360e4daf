"""`fuzzcomp bench`: the command runs and its JSON carries every field.

No timing assertions here: speed is measured by rerunning the benchmark
(benchmarks/README.md), never by timed tests.
"""
import json

import pytest

from fuzzcomp.cli import parser as cli
from fuzzcomp.bench.throughput import PHASES, SCHEMA
from fuzzcomp.bench.campaigns import PLANTED, first_detection, parse_planted

INPROCESS_FIELDS = ("cases", "valid", "valid_rate", "warmup_s", "wall_s", "cpu_s", "cases_per_hour_per_core",
                    "cases_per_cpu_hour", "compile_s_per_case", "compiled_cases", "phase_s", "phase_share",
                    "harness_overhead", "eager_split_measured", "compile_limit_cases_per_hour",
                    "peak_rss_mb", "per_case")
ISOLATED_FIELDS = ("cases", "valid", "statuses", "worker_start_s", "warmup_s", "wall_s", "worker_cpu_s",
                   "cases_per_hour_per_core", "cases_per_cpu_hour", "worker_timings_s",
                   "peak_rss_mb_per_worker")


def test_bench_three_seeds_aot_eager_writes_every_field(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = cli.main(["bench", "--seeds", "3", "--backend", "aot_eager", "--json", str(out)])
    assert code == 0
    result = json.loads(out.read_text())
    assert set(SCHEMA) <= set(result)
    ip, iso = result["inprocess"], result["isolated"]
    for k in INPROCESS_FIELDS:
        assert k in ip, k
    for k in ISOLATED_FIELDS:
        assert k in iso, k
    assert ip["cases"] == iso["cases"] == 3
    assert [c["seed"] for c in ip["per_case"]] == [0, 1, 2]
    assert set(PHASES) | {"compile"} == set(ip["phase_s"])
    assert ip["eager_split_measured"] is True      # the probe found execute's run_call
    # no call is timed twice: the time inside calls never exceeds a case's wall time
    assert all(c["harness"] >= 0 for c in ip["per_case"])
    total = sum(ip["phase_s"][k] for k in PHASES)
    wall = sum(c["wall"] for c in ip["per_case"])
    assert total == pytest.approx(wall, rel=0.01, abs=0.01)
    assert ip["compiled_cases"] >= 1 and ip["phase_s"]["compiled"] > 0
    assert ip["phase_s"]["eager"] > 0
    assert iso["peak_rss_mb_per_worker"] > 0
    assert iso["statuses"].get("done") == 3
    assert result["campaign"] is None and result["recall"] is None   # not asked for
    printed = capsys.readouterr().out
    assert "harness overhead" in printed and "time by phase" in printed


def test_bench_bad_input_is_one_line_exit_2(tmp_path, capsys):
    assert cli.main(["bench", "--seeds", "0"]) == 2
    assert cli.main(["bench", "--backend", "no_such_backend", "--json", str(tmp_path / "b.json")]) == 2
    assert cli.main(["bench", "--recall", "perturb_add,nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("fuzzcomp: error:") for line in err)


def test_first_detection_reads_the_event_log():
    events = [{"t": 100.0, "event": "start"}, {"t": 101.0, "event": "case"}, {"t": 102.5, "event": "case"},
              {"t": 102.6, "event": "finding", "symptom": "numeric", "stage": "runtime"},
              {"t": 103.0, "event": "finding", "symptom": "numeric", "stage": "runtime"}]
    d = first_detection(events)
    assert d == {"detected": True, "first_finding_s": 2.6, "cases_to_detect": 3,
                 "first_symptom": "numeric/runtime"}
    assert first_detection(events[:3])["detected"] is False


def test_parse_planted():
    assert parse_planted("all") == PLANTED
    assert parse_planted("perturb_add, stale_result") == ("perturb_add", "stale_result")
    with pytest.raises(ValueError):
        parse_planted("perturb_add,bogus")


@pytest.mark.slow
def test_bench_recall_detects_a_planted_fault(tmp_path):
    out = tmp_path / "bench.json"
    assert cli.main(["bench", "--seeds", "2", "--backend", "aot_eager", "--no-isolated", "--json", str(out),
                     "--recall", "perturb_add", "--recall-cases", "20", "--workdir", str(tmp_path)]) == 0
    rec = json.loads(out.read_text())["recall"]["perturb_add"]
    assert rec["exit_code"] == 1 and rec["detected"] is True  # 1: the campaign has findings and rec["cases_to_detect"] >= 1


def test_jobs_sweep_rows_and_table():
    """benchmarks/jobs_sweep.py: its parsing and the row it takes from a campaign's summary."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "jobs_sweep.py"
    spec = importlib.util.spec_from_file_location("jobs_sweep", path)
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    assert sweep.parse_jobs("8,12, 16,24") == [8, 12, 16, 24]
    with pytest.raises(SystemExit):
        sweep.parse_jobs("8,x")
    with pytest.raises(SystemExit):
        sweep.parse_jobs("0")
    s = {"cases": 120, "valid_rate": 0.9, "findings": 7, "wall_s": 60.0, "dropped": 2,
         "buckets": {"a": {}, "b": {}, "c": {}}, "phase_s": {"worker start-up": 30.5}}
    row = sweep.row_from_summary(16, s, process_s=63.0, budget_s=60.0)
    assert row["cases_per_min"] == 120.0 and row["buckets_per_min"] == 3.0 and row["overrun_s"] == 3.0
    table = sweep.render([row, dict(row, jobs=8, cases_per_min=90.0)])
    assert "most cases/min: --jobs 16" in table and table.splitlines()[0].split()[0] == "jobs"
