"""A Stream Manager killed while a bolt of its container is flooded: the bolt's instance
registers with the restarted Stream Manager and goes on executing.

Flooded, the instance is busy both ways: its executor hands over output the dead Stream
Manager's socket no longer takes while its gateway holds input the executor has no room
for. The gateway still watches the connection's events, reads again once it can, and
registers with the restarted Stream Manager (engine/instance/gateway.py); an instance
that did not would never execute again, and ``heron update`` would wait for it.

What is checked is behaviour: each instance of the slow bolt executes well past what was
queued for it when the Stream Manager died, which only a re-registered instance can (the
restarted Stream Manager drops tuples for instances that have not registered with it).
"""

from __future__ import annotations

import signal
import time

import psutil
import pytest

from engine.common.process import read_pid_file
from tests.e2e.heron.helpers import PROJECTS, HeronRun, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ACKING = PROJECTS / "acking"
#: 2 KB rows at 500/s per slow instance: a Stream Manager's hop fills within a second
OPTIONS = {"e2e.seconds": 90, "e2e.delay": 0.002, "e2e.padding": 2000}
#: executes after the restart that prove registration: the batches an instance may still
#: hold from before (its pipes and socket queues, 16 batches each of about 16 rows) are
#: far fewer
PROGRESS = 1500


def executed(run: HeronRun) -> dict[str, int]:
    """Execute count per instance of the slow bolt, from the Topology Master."""
    out = {}
    for instance, values in run.metrics().items():
        if values.get("component") == "slow":
            out[instance] = int(float(values.get("__execute-count", 0)))
    return out


def test_a_flooded_instance_registers_with_its_restarted_stream_manager(tmp_path,
                                                                       isolated_imports):
    run = HeronRun(ACKING, "e2e_flooded_restart", tmp_path / "run", keep_all=False,
                   options=OPTIONS)
    try:
        run.start()
        placement = run.placement
        assert wait_until(lambda: len(executed(run)) == 2
                          and min(executed(run).values()) > 300, timeout=45), executed(run)
        # the Stream Manager of a container running a slow instance, not the spout's when
        # there is a choice (the spout's container then keeps flooding)
        spout_stmgr = placement.container_of[placement.tasks["firehose"][0]]
        candidates = sorted({placement.container_of[t] for t in placement.tasks["slow"]})
        stmgr_id = next((s for s in candidates if s != spout_stmgr), candidates[0])
        pid_file = run.working_dir / "pids" / f"{stmgr_id}.pid"
        old = read_pid_file(pid_file)
        assert old is not None, f"no pid file for {stmgr_id}"
        time.sleep(2.0)  # flooded for a while: every hop of that container is full
        old.send_signal(signal.SIGKILL)
        psutil.wait_procs([old], timeout=5)
        new = wait_until(lambda: (p := read_pid_file(pid_file)) is not None
                         and p.pid != old.pid and p, timeout=30)
        assert new, f"{stmgr_id} was not restarted"
        base = executed(run)
        assert wait_until(lambda: all(executed(run).get(i, 0) - n >= PROGRESS
                                      for i, n in base.items()), timeout=60), (
            f"after {stmgr_id} restarted, executed went from {base} to {executed(run)} "
            f"(logs in {run.log_dir})")
    finally:
        run.close()
    assert run.alive() == []
