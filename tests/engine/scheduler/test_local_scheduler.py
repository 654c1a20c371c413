"""LocalScheduler in process (library mode): launch, restart, kill."""

from __future__ import annotations

import time

import psutil
import pytest

from engine.scheduler.local import LocalScheduler
from engine.statemgr import LocalFileSystemStateManager

pytestmark = pytest.mark.timeout(90)


def wait_for(cond, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def children_of(pid: int) -> set[int]:
    try:
        return {c.pid for c in psutil.Process(pid).children()
                if c.status() != psutil.STATUS_ZOMBIE}
    except psutil.NoSuchProcess:
        return set()


def test_launch_restart_kill(launch_spec, sweep, topology_processes):
    from engine.common.network.endpoints import ipc_dir

    scheduler = LocalScheduler(launch_spec)
    try:
        assert scheduler.launch() == [0, 1, 2]
        pids = scheduler.executor_pids()
        assert set(pids) == {"executor-0", "executor-1", "executor-2"}
        # 3 executors + 1 TM + 2 x (stmgr, metricsmgr, 2 instances)
        assert wait_for(lambda: len(topology_processes()) == 3 + 1 + 8)
        assert (launch_spec.pid_dir / "executor-1.pid").exists()
        assert (launch_spec.log_dir / "executor-1.log").exists()

        old_exec = pids["executor-1"]
        old_children = children_of(old_exec)
        assert len(old_children) == 4
        scheduler.restart(1)
        new_exec = scheduler.executor_pids()["executor-1"]
        assert new_exec != old_exec
        assert scheduler.executor_pids()["executor-2"] == pids["executor-2"]
        assert wait_for(lambda: len(children_of(new_exec)) == 4)
        assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
                       for p in old_children)
        with pytest.raises(ValueError, match="no container 7"):
            scheduler.restart(7)

        ipc = ipc_dir(launch_spec.topology_id)
        assert ipc.exists()
    finally:
        scheduler.kill()
    assert topology_processes() == []
    assert not ipc.exists()
    sm = LocalFileSystemStateManager(launch_spec.state.root)
    assert sm.topologies() == []
    assert sm.get("packingplans", "wc") is None and sm.get("executionstate", "wc") is None
    sm.close()
    scheduler.kill()  # idempotent


def test_executors_are_restarted_when_they_die(launch_spec, sweep, topology_processes):
    scheduler = LocalScheduler(launch_spec)
    try:
        scheduler.launch()
        victim = scheduler.executor_pids()["executor-2"]
        victim_children = children_of(victim)
        assert wait_for(lambda: len(children_of(victim)) == 4)
        victim_children = children_of(victim)
        psutil.Process(victim).kill()
        assert wait_for(lambda: scheduler.executor_pids().get("executor-2") not in (None, victim))
        # the dead executor's processes died with it (die_with_parent)
        assert wait_for(lambda: not any(psutil.pid_exists(p) for p in victim_children), 5)
        assert wait_for(lambda: len(topology_processes()) == 12)
    finally:
        scheduler.kill()
