"""Fixtures for scheduler tests: a launch spec over a local state tree with a stored
two-container plan, stand-ins for every engine process, and a sweeper for processes that
were reparented away from the test (a SIGKILLed scheduler's executors)."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from engine.common.launch import LaunchSpec, StateManagerSpec, Submission
from engine.common.security.keys import TopologyKeys
from engine.messages import execution_state_pb2, topology_pb2
from engine.packing import ContainerPlan, InstancePlan, PackingPlan, Resource
from engine.statemgr import LocalFileSystemStateManager


def two_container_plan() -> PackingPlan:
    r = Resource()
    return PackingPlan(
        "wc-pack",
        [
            ContainerPlan(
                1, [InstancePlan("word-spout", 1, 0, r), InstancePlan("count-bolt", 3, 0, r)]
            ),
            ContainerPlan(
                2, [InstancePlan("word-spout", 2, 1, r), InstancePlan("count-bolt", 4, 1, r)]
            ),
        ],
    )


@pytest.fixture
def launch_spec(tmp_path: Path, monkeypatch) -> LaunchSpec:
    monkeypatch.setenv("HERON_MODULE_OVERRIDES",
                       "tmanager=engine.common.process.standin,"
                       "stmgr=engine.common.process.standin,"
                       "metricsmgr=engine.common.process.standin,"
                       "instance=engine.common.process.standin")
    spec = LaunchSpec(topology_name="wc", topology_id=f"wc-{os.getpid():012x}"[-15:],
                      working_dir=str(tmp_path / "topologies" / "wc"),
                      submission=Submission(project=str(tmp_path), name="wc"),
                      state=StateManagerSpec(kind="local", root=str(tmp_path / "state")),
                      restart_backoff_initial_ms=200)
    spec.save()
    keys = TopologyKeys.generate("wc", spec.topology_id)
    keys.save(spec.home)
    sm = LocalFileSystemStateManager(spec.state.root)
    sm.create("keys", "wc", keys.to_proto())
    sm.create("topologies", "wc", topology_pb2.Topology(id=spec.topology_id, name="wc"))
    sm.create("packingplans", "wc", two_container_plan().to_proto())
    sm.create("executionstate", "wc", execution_state_pb2.ExecutionState(
        topology_name="wc", topology_id=spec.topology_id))
    sm.close()
    return spec


def processes_using(spec: LaunchSpec) -> list[psutil.Process]:
    """Every live process whose command line names this launch file (wherever it was
    reparented)."""
    found = []
    needle = str(spec.path)
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and needle in " ".join(
                    proc.info["cmdline"] or ()):
                found.append(proc)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def sweep(launch_spec):
    """Kill (and fail on) anything left running from the launch spec after the test."""
    yield
    leftovers = processes_using(launch_spec)
    for proc in leftovers:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(leftovers, timeout=5)
    assert not leftovers, f"processes left running: {[p.pid for p in leftovers]}"


@pytest.fixture
def topology_processes(launch_spec):
    """A function listing the live processes of the launch spec's topology."""
    return lambda: processes_using(launch_spec)
