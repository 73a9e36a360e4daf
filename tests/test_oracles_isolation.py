"""Hangs and aborts are findings, caught through the real worker path with a short timeout."""
import pytest

from fuzzcomp.campaign.pipeline import probe_keys
from fuzzcomp.workers.worker import Worker, WorkerSettings

from oracle_cases import case, mul_relu


@pytest.fixture(scope="module")
def worker():
    w = Worker(0, WorkerSettings(threads=1))
    yield w
    w.stop()


@pytest.mark.parametrize("backend,symptom", [("fuzzcomp.planted:hang", "hang"),
                                             ("fuzzcomp.planted:abort", "segfault")])
def test_isolation_findings(worker, backend, symptom):
    valid, keys, verdicts = probe_keys(worker, case(mul_relu(), backend, sizes=((4,),)), timeout_s=10)
    assert valid
    assert [v.symptom for v in verdicts] == [symptom]


@pytest.mark.slow
def test_worker_survives_and_localises(worker):
    from fuzzcomp.base.messages import DONE, LOCALISE, Job
    from fuzzcomp.judge.check import check
    c = case(mul_relu(), "fuzzcomp.planted:wrong_gradient")
    _, verdicts = check(c)
    r = worker.run(Job(7, LOCALISE, c, 120, target=verdicts[0]))
    assert r.status == DONE
    # the real ladder is correct for this program: nothing shows the planted symptom
    assert r.stats["stage"] == "unknown" and set(r.stats["rungs"]) == {
        "eager", "aot_eager", "aot_eager_decomp_partition", "inductor"}
