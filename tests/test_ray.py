"""``fuzzcomp run --ray`` on a real multi-node Ray cluster on loopback, with an actor and a node killed.

The cluster is real: a head node (GCS, raylet, object store) and a second
node (its own raylet and object store), each with one CPU, all listening on
127.0.0.1 only. It is built with ``ray.cluster_utils.Cluster``, the tool Ray
documents for multi-node tests on one machine, rather than ``ray start``:
Ray's CLI refuses a second node on a loopback-only cluster and otherwise
rewrites 127.0.0.1 to the machine's routable address and binds every
interface. Owning the node processes also lets the test kill exactly one
node, and tear everything down by handle instead of ``ray stop`` (which stops
every Ray process on the machine).

Run it:  pytest tests/test_ray.py -m slow -v      (about 3 minutes on 2 busy cores; needs fuzzcomp[ray])
The two usage-error tests are fast and run in the default suite, with or without Ray.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import tempfile
import sys
import time
from pathlib import Path

import pytest

from fuzzcomp.cli.parser import main

needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="Ray is not installed: pip install 'fuzzcomp[ray]' to run the Ray tests")

# Loopback only: Ray uses 127.0.0.1 as the node address, and no usage stats are sent.
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
NODE_ARGS = dict(num_cpus=1, object_store_memory=80 * 1024 * 1024, node_ip_address="127.0.0.1")


@pytest.fixture
def cluster(monkeypatch, tmp_path):
    for k, v in LOOPBACK_ENV.items():
        monkeypatch.setenv(k, v)
    if "ray" in sys.modules:
        import ray._private.ray_constants as rc
        if rc.ENABLE_RAY_CLUSTER:
            pytest.fail("ray was imported before this test set its loopback environment; run test_ray.py alone")
    from ray.cluster_utils import Cluster
    # One private Ray temp dir for everything this cluster writes. Besides its
    # sessions under ``temp_dir``, ``Cluster`` writes its address file
    # (ray_current_cluster) into Ray's *default* temp dir, $RAY_TMPDIR/ray
    # (else $TMPDIR/ray, else /tmp/ray), ignoring ``temp_dir`` and without
    # creating the folder: on a machine that never ran Ray that write failed.
    # Pointing RAY_TMPDIR here and creating <temp>/ray sends both to one
    # folder the test owns, and nothing lands in (or is read from) /tmp/ray.
    temp = tempfile.mkdtemp(prefix="fzray")  # short: Ray's unix socket paths must fit in 107 bytes
    ray_dir = os.path.join(temp, "ray")
    os.makedirs(ray_dir)
    monkeypatch.setenv("RAY_TMPDIR", temp)
    c = Cluster(initialize_head=True, head_node_args=dict(
        NODE_ARGS, include_dashboard=False, temp_dir=ray_dir,
        # notice a dead node within a few seconds rather than the default ~30 s
        _system_config={"health_check_period_ms": 1000, "health_check_failure_threshold": 3}))
    try:
        worker_node = c.add_node(**NODE_ARGS)
        c.wait_for_nodes()
        yield c, worker_node
    finally:
        c.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def _events(out: Path) -> list[dict]:
    path = out / "events.jsonl"
    if not path.exists():
        return []
    evs = []
    for line in path.read_text().splitlines():
        try:
            evs.append(json.loads(line))
        except json.JSONDecodeError:  # a line being written right now
            pass
    return evs


def _wait_for(proc, out: Path, pred, what: str, timeout: float = 180.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        evs = _events(out)
        if pred(evs):
            return evs
        if proc.poll() is not None:
            pytest.fail(f"the campaign ended (exit {proc.returncode}) before {what}:\n"
                        + proc.stdout.read()[-3000:])
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


def _count(evs, kind):
    return sum(e.get("event") == kind for e in evs)


def test_ray_without_ray_installed_is_a_one_line_usage_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails, as where it is not installed
    code = main(["run", "--ray", "--cases", "1", "--backend", "eager", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "pip install 'fuzzcomp[ray]'" in err, err
    assert not (tmp_path / "o" / "campaign.json").exists()


@pytest.mark.parametrize("address, says", [("127.0.0.1:1", "no Ray cluster answers there"),
                                           ("nonsense", "HOST:PORT")])
def test_ray_bad_address_is_a_one_line_usage_error(address, says, tmp_path, capsys):
    code = main(["run", "--ray", address, "--cases", "1", "--backend", "eager", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert not (tmp_path / "o" / "campaign.json").exists()


@pytest.mark.slow
@needs_ray
def test_campaign_on_a_two_node_cluster_survives_a_killed_actor_and_a_killed_node(cluster, tmp_path):
    c, worker_node = cluster
    out = tmp_path / "camp"
    cases = 14
    proc = subprocess.Popen(
        [sys.executable, "-m", "fuzzcomp", "run", "--ray", c.address, "--cases", str(cases), "--seed", "2",
         "--backend", "fuzzcomp.planted:perturb_add", "--minimize-budget", "15", "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, **LOOPBACK_ENV})
    try:
        evs = _wait_for(proc, out, lambda e: _count(e, "case") >= 2, "two cases", timeout=240)
        engine = next(e for e in evs if e["event"] == "engine")
        assert engine["engine"] == "ray" and engine["workers"] == 2
        # one actor per node, one per core: the campaign really spans both nodes
        assert len(engine["nodes"]) == 2 and all(n["workers"] == 1 for n in engine["nodes"].values())
        doomed_node = worker_node.node_id[:12]
        on_head = next(w for w in engine["layout"] if w["node"] != doomed_node)
        on_worker_node = next(w for w in engine["layout"] if w["node"] == doomed_node)

        # 1. kill the head node's actor process mid-case (the workers are never idle while cases remain)
        os.kill(on_head["pid"], signal.SIGKILL)
        evs = _wait_for(proc, out, lambda e: _count(e, "ray-retry") >= 1, "the killed actor's case to be retried")
        lost_actor = next(e for e in evs if e["event"] == "ray-lost")
        assert lost_actor["worker"] == on_head["worker"] and lost_actor["job_kind"] in ("check", "eager-only")

        # 2. kill the whole second node (its raylet, object store and actor) while cases remain
        done = _count(evs, "case")
        assert done < cases, "the campaign finished before the node could be killed: raise --cases"
        c.remove_node(worker_node, allow_graceful=False)
        evs = _wait_for(proc, out, lambda e: any(x["event"] == "ray-moved" for x in e),
                        "the dead node's worker to move to the live node")
        proc.wait(timeout=300)
        log = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 1, log[-3000:]  # 1: the planted campaign has findings

    evs = _events(out)
    case_evs = [e for e in evs if e["event"] == "case"]
    # no completed case lost and none counted twice: exactly the indices 0..cases-1
    assert sorted(e["index"] for e in case_evs) == list(range(cases)), log[-2000:]
    # every case that was in flight on a lost actor was retried or recorded
    lost = [e for e in evs if e["event"] == "ray-lost"]
    assert {e["worker"] for e in lost} >= {on_head["worker"], on_worker_node["worker"]}
    seeds_done = {e["seed"] for e in case_evs}
    for e in lost:
        if e["job_kind"] in ("check", "eager-only"):
            assert e["seed"] in seeds_done, e
    moved = [e for e in evs if e["event"] == "ray-moved"]
    assert moved[0]["from_node"] == doomed_node and moved[0]["to_node"] != doomed_node
    # all findings are on disk, in the same store and summary as a local run
    finding_evs = [e for e in evs if e["event"] == "finding"]
    on_disk = sorted(p.parent.name for p in (out / "findings").glob("*/finding.json"))
    assert sorted(e["id"] for e in finding_evs) == on_disk
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases"] == cases and summary["findings"] == len(on_disk) >= 1
    assert summary["harness_errors"] == 0
    # minimisation ran on the cluster too: every bucket got a repro that reproduced in a fresh process
    assert all(b["confirmed"] for b in summary["buckets"].values()), summary["buckets"]
    print(f"\nray campaign: {cases} cases, {len(on_disk)} findings, {len(lost)} lost actor runs, "
          f"{_count(evs, 'ray-retry')} retries, moved: {moved[0]}")


def test_ray_default_address_ignores_a_stale_address_file_and_starts_its_own(monkeypatch, tmp_path):
    """``--ray`` with no address: RAY_ADDRESS, else a live `ray start` cluster here, else our own Ray."""
    from fuzzcomp.workers.ray_worker import RayEngineError, resolve_address
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    assert resolve_address("default") == ("local", True)          # a fresh machine: no <tmp>/ray at all
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text("127.0.0.1:1")
    assert resolve_address("default") == ("local", True)          # left by a cluster that is gone
    with socket_listening() as port:                              # a `ray start` cluster that answers
        (tmp_path / "ray" / "ray_current_cluster").write_text(f"127.0.0.1:{port}")
        assert resolve_address("default") == (f"127.0.0.1:{port}", False)
        monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
        assert resolve_address("default") == (f"127.0.0.1:{port}", False)
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")              # RAY_ADDRESS is the user's explicit choice
    with pytest.raises(RayEngineError, match="no Ray cluster answers there"):
        resolve_address("default")
    assert resolve_address("10.0.0.5:6379") == ("10.0.0.5:6379", False)


def test_a_node_without_the_campaign_folder_logs_to_a_file_of_that_campaign(monkeypatch, tmp_path):
    from fuzzcomp.workers.ray_worker import node_log_path
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    a = node_log_path("/shared/fuzz-out/run-20261201-080000/workers.log")
    b = node_log_path("/shared/fuzz-out/run-20261201-090000/workers.log")
    assert a != b and os.path.dirname(a) == str(tmp_path) and "run-20261201-080000" in os.path.basename(a)
    assert node_log_path("/x/we ird;name/workers.log").startswith(str(tmp_path / "fuzzcomp-we_ird_name-"))


class socket_listening:
    def __enter__(self):
        import socket
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        return self.sock.getsockname()[1]

    def __exit__(self, *exc):
        self.sock.close()


@pytest.mark.slow
@needs_ray
def test_ray_with_no_cluster_starts_its_own_on_a_machine_that_never_ran_ray(tmp_path):
    """A user's first ``fuzzcomp run --ray`` on a new box: empty HOME and TMPDIR, no Ray temp dir, no cluster."""
    home = tmp_path / "home"
    home.mkdir()
    tmp = Path(tempfile.mkdtemp(prefix="fzr"))  # short: Ray's unix socket paths must fit in 107 bytes
    out = tmp_path / "camp"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(tmp),
           "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    try:
        p = subprocess.run([sys.executable, "-m", "fuzzcomp", "run", "--ray", "--cases", "3", "--seed", "1",
                            "--backend", "eager", "--no-minimize", "--out", str(out), "--quiet"],
                           capture_output=True, text=True, env=env, timeout=600)
        assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
        engine = next(e for e in _events(out) if e["event"] == "engine")
        assert engine["engine"] == "ray" and engine["address"] == "local" and engine["workers"] >= 1
        assert json.loads((out / "summary.json").read_text())["cases"] == 3
        assert (tmp / "ray" / "session_latest").exists()  # Ray's sessions went to this TMPDIR, made for it
        print(f"\nown one-machine Ray: {engine['workers']} workers, address {engine['address']}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
