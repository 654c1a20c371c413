"""Failure recovery on the heron engine: ``kill -9`` one process of each kind while an
at-least-once topology runs; it is restarted, re-registers, the plan is redistributed,
and every id the spouts emitted is acked in the end (replayed where a tree was lost).
Recovery time (kill until the spouts' acks move again) is printed.

The suite runs on the compiled tuple path; the Stream Manager kill (it holds the routing
and the XOR ack bookkeeping) also runs with ``HERON_PURE_PYTHON=1`` in every process."""

from __future__ import annotations

import collections
import json
import signal
import time
import uuid
from pathlib import Path

import psutil
import pytest

from engine.common.launch import StateManagerSpec
from engine.common.process import read_pid_file
from tests.e2e.heron.helpers import PROJECTS, HeronRun, json_lines, leaf_tuples, wait_until
from tests.e2e.heron.test_acking import assert_pure_python

pytestmark = pytest.mark.timeout(240)

ACKING = PROJECTS / "acking"
LIMIT = 600
RATE = 100  # ids per second per spout task: the run lasts about six seconds


def acked_ids(directory: Path) -> dict[int, collections.Counter]:
    out = {}
    for path in sorted(directory.glob("*.jsonl")):
        out[int(path.stem)] = collections.Counter(
            e["id"] for e in json_lines(path) if e["event"] == "ack")
    return out


def victim(run: HeronRun, kind: str) -> str:
    names = sorted(run.record_processes())
    wanted = {
        "bolt instance": lambda n: n.startswith("container_") and "_relay_" in n,
        "spout instance": lambda n: n.startswith("container_") and "_source_" in n,
        "stream manager": lambda n: n.startswith("stmgr-"),
        "metrics manager": lambda n: n.startswith("metricsmgr-"),
        "topology master": lambda n: n == "heron-tmanager",
        "executor": lambda n: n.startswith("executor-") and n != "executor-0",
    }[kind]
    matching = [n for n in names if wanted(n)]
    assert matching, f"no {kind} among {names}"
    return matching[-1]


KINDS = ["bolt instance", "spout instance", "stream manager", "metrics manager",
         "topology master", "executor"]


@pytest.mark.parametrize("kind, pure", [
    *(pytest.param(kind, False, id=kind) for kind in KINDS),
    pytest.param("stream manager", True, id="stream manager-pure-python")])
def test_a_killed_process_comes_back_and_every_id_is_acked(kind, pure, tmp_path,
                                                          isolated_imports, monkeypatch):
    monkeypatch.delenv("HERON_PURE_PYTHON_KINDS", raising=False)
    if pure:
        monkeypatch.setenv("HERON_PURE_PYTHON", "1")
    out = tmp_path / "ledger"
    run = HeronRun(ACKING, "e2e_recovery", tmp_path / "run",
                   options={"e2e.limit": LIMIT, "e2e.out": str(out), "e2e.rate": RATE})
    try:
        run.start()
        assert wait_until(lambda: sum(sum(c.values()) for c in acked_ids(out).values()) > 100,
                          timeout=30), "the topology did not get going"
        name = victim(run, kind)
        proc = run.processes[name]
        before = sum(sum(c.values()) for c in acked_ids(out).values())
        killed_at = time.monotonic()
        proc.send_signal(signal.SIGKILL)
        psutil.wait_procs([proc], timeout=5)
        # acks move again: counted from the spouts' own ledgers
        assert wait_until(lambda: sum(sum(c.values()) for c in acked_ids(out).values())
                          > before + 50, timeout=60), f"no progress after killing {name}"
        recovery = time.monotonic() - killed_at
        print(f"\nrecovery after killing the {kind} ({name}): {recovery:.1f}s")
        result = run.finish(time_limit=120)
    finally:
        run.close()
    assert result.reason == "finished", (
        result.reason, result.error, result.log_dir,
        {i: (v.get("__done"), v.get("__pending")) for i, v in run.runner.instances.items()},
        {t: LIMIT - len(c) for t, c in acked_ids(out).items()})
    acked = acked_ids(out)
    assert len(acked) == 2
    for task, counts in acked.items():
        assert set(counts) == set(range(LIMIT)), (
            task,
            sorted(set(range(LIMIT)) - set(counts))[:20],
        )
    sink = collections.Counter(row[0] for row in leaf_tuples(result, "sink"))
    assert all(sink[n] >= 2 for n in range(LIMIT))  # each id of both spout tasks, at least once
    assert run.alive() == []
    if pure:  # the restarted Stream Manager too
        assert_pure_python(result.log_dir)


def test_on_zookeeper_a_killed_topology_master_recreates_its_location_and_reuses_the_plan(
        zookeeper, tmp_path, isolated_imports):
    out = tmp_path / "ledger"
    spec = StateManagerSpec(kind="zookeeper", zk_hosts=zookeeper.hosts,
                            zk_root=f"/heron-recovery-{uuid.uuid4().hex[:8]}")
    run = HeronRun(ACKING, "e2e_recovery", tmp_path / "run", state_spec=spec,
                   options={"e2e.limit": LIMIT, "e2e.out": str(out), "e2e.rate": RATE})
    try:
        run.start()
        assert wait_until(lambda: sum(sum(c.values()) for c in acked_ids(out).values()) > 100,
                          timeout=30)
        old = run.location
        plan_before = run.state.get("pplans", "e2e_recovery")
        proc = run.processes["heron-tmanager"]
        proc.send_signal(signal.SIGKILL)
        psutil.wait_procs([proc], timeout=5)
        # the ephemeral location goes with the dead session's process and comes back
        # from the restarted Topology Master, on new ports
        relocated = wait_until(lambda: (loc := run.location) is not None
                               and loc.controller_endpoint != old.controller_endpoint and loc,
                               timeout=60)
        assert relocated, "the Topology Master's location was not re-created"
        assert run.state.get("pplans", "e2e_recovery").topology.id == plan_before.topology.id
        result = run.finish(time_limit=120)
    finally:
        run.close()
    assert result.reason == "finished", (result.reason, result.error, result.log_dir)
    tm_log = (run.log_dir / "heron-tmanager.log").read_text()
    assert "adopted the stored physical plan" in tm_log
    for task, counts in acked_ids(out).items():
        assert set(counts) == set(range(LIMIT)), task
    assert run.alive() == []


@pytest.mark.parametrize("kind", ["topology master", "stream manager"])
def test_a_role_killed_again_and_again_after_it_served_is_not_crash_looping(
        kind, tmp_path, isolated_imports):
    """A Topology Master or Stream Manager killed from outside after it served (the
    physical plan sent; registered) made progress: each kill is restarted at once, never
    backed off nor reported crash-looping, however soon the next kill comes."""
    out = tmp_path / "ledger"
    run = HeronRun(ACKING, "e2e_recovery", tmp_path / "run",
                   options={"e2e.limit": 100_000, "e2e.out": str(out), "e2e.rate": RATE})
    try:
        run.start()

        def acked() -> int:
            return sum(sum(c.values()) for c in acked_ids(out).values())
        assert wait_until(lambda: acked() > 100, timeout=30), "the topology did not get going"
        name = victim(run, kind)
        # what the role logs once it served (the Topology Master: the physical plan sent;
        # a Stream Manager: registered), each kill coming only after that
        served_line = {"topology master": "physical plan sent to",
                       "stream manager": "registered with the topology master"}[kind]
        log = run.log_dir / f"{name}.log"

        def served() -> int:
            return log.read_text().count(served_line) if log.exists() else 0
        pid_file = run.working_dir / "pids" / f"{name}.pid"
        for _ in range(3):
            assert wait_until(lambda: read_pid_file(pid_file) is not None, timeout=30), name
            proc = read_pid_file(pid_file)
            seen = served()
            proc.send_signal(signal.SIGKILL)
            psutil.wait_procs([proc], timeout=5)
            assert wait_until(lambda: served() > seen, timeout=60), \
                f"{name} did not serve again after its kill"
        before = acked()
        assert wait_until(lambda: acked() > before + 50, timeout=60), "no progress after"
        status = json.loads((run.working_dir / "restarts" / f"{name}.json").read_text())
        assert status["attempts"] == 3 and status["crash_looping"] is False, status
        assert status["failures_in_a_row"] == 0, status
        assert [r["progressed"] for r in status["records"]] == [True, True, True], status
    finally:
        run.close()
    executor_log = "\n".join(p.read_text() for p in run.log_dir.glob("executor-*.log"))
    assert f"{name} is crash-looping" not in executor_log
