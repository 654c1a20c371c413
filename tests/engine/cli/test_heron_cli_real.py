"""The `heron` topology commands against the real engine processes: submit, list,
deactivate/activate, logs and kill, with the local state manager and with a real
ZooKeeper server; and the errors a user meets (a name already running, a ZooKeeper
address that does not answer)."""

from __future__ import annotations

import json
import stat
import time
import uuid
from pathlib import Path

import pytest

from engine.common.network.sockets import request
from engine.common.security.guard import SocketSecurity
from engine.common.security.keys import keys_from_state
from engine.messages import tmanager_pb2
from engine.statemgr import open_state_manager
from tests.e2e.heron.helpers import wait_until
from tests.engine.cli.conftest import heron

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[3]
WORDCOUNT = REPO / "examples" / "wordcount"


def spout_emitted(state, name: str) -> int:
    """What the Topology Master's metrics say the spout has emitted so far."""
    location = state.get("tmanagers", name)
    if location is None:
        return -1
    security = SocketSecurity(keys_from_state(state, name))
    response = request(location.controller_endpoint,
                       tmanager_pb2.MetricRequest(component_name="word_spout"), timeout=5,
                       security=security)
    return sum(int(m.value) for t in response.metric for m in t.metric
               if m.name == "word_spout/__emit-count")


def exercise(state_args: list[str], state, live_processes, while_running=None) -> None:
    result = heron("submit", "local", str(WORDCOUNT), "-w", "2", "-o", "wordcount.seed=7",
                   *state_args)
    assert result.exit_code == 0, result.output
    assert "submitted topology 'wordcount'" in result.output
    try:
        assert wait_until(lambda: spout_emitted(state, "wordcount") > 1000), \
            "the topology never got going"
        pplan = state.get("pplans", "wordcount")
        assert sorted(s.id for s in pplan.stmgrs) == ["stmgr-1", "stmgr-2"]

        again = heron("submit", "local", str(WORDCOUNT), *state_args)
        assert again.exit_code == 2
        assert "already running" in again.output

        listing = heron("list", *state_args)
        assert (
            listing.exit_code == 0 and "wordcount" in listing.output and "RUNNING" in listing.output
        )

        assert heron("deactivate", "wordcount", *state_args).exit_code == 0
        time.sleep(2.5)  # metrics travel every second: let the last counts arrive
        paused_at = spout_emitted(state, "wordcount")
        time.sleep(2.5)
        assert spout_emitted(state, "wordcount") == paused_at, "a deactivated spout kept emitting"
        assert heron("activate", "wordcount", *state_args).exit_code == 0
        assert wait_until(lambda: spout_emitted(state, "wordcount") > paused_at + 1000)

        logs = heron("logs", "wordcount", "count_bolt", *state_args)
        assert logs.exit_code == 0 and "registered with the stream manager" in logs.output
        if while_running is not None:
            while_running()
    finally:
        killed = heron("kill", "wordcount", *state_args)
    assert killed.exit_code == 0, killed.output
    assert state.topologies() == []
    assert wait_until(lambda: not live_processes(), timeout=15), \
        f"processes outlived heron kill: {[p.pid for p in live_processes()]}"


def test_submit_control_and_kill_with_the_local_state_manager(real_engine, sweep,
                                                               live_processes, isolated_imports):
    with open_state_manager("local", root=real_engine / "state") as state:
        exercise([], state, live_processes)


def test_submit_control_and_kill_with_zookeeper_and_a_digest(real_engine, sweep, live_processes,
                                                             isolated_imports, zookeeper,
                                                             tmp_path):
    """Every engine process reaches the digest-protected tree through the working dir's
    owner-only copy of the digest; launch.json names that file, never the digest; a
    client without it is refused in one line (docs/security.md, "ZooKeeper ACLs")."""
    root = f"/heron-test-{uuid.uuid4().hex[:12]}"
    auth = tmp_path / "zk-auth"
    auth.write_text("heron-cli:pw-" + uuid.uuid4().hex + "\n")
    auth.chmod(0o600)
    plain = ["--state-manager", "zookeeper", "--zk", zookeeper.hosts, "--zk-root", root]
    copy = real_engine / "topologies" / "wordcount" / "secrets" / "zk-auth"

    def while_running() -> None:
        launch = (real_engine / "topologies" / "wordcount" / "launch.json").read_text()
        assert json.loads(launch)["state"]["zk_auth_file"] == str(copy)
        assert auth.read_text().strip() not in launch
        assert copy.read_text() == auth.read_text().strip()
        assert stat.S_IMODE(copy.stat().st_mode) == 0o600
        refused = heron("list", *plain)
        assert refused.exit_code == 1 and "protected by a digest ACL" in refused.output
        assert "Traceback" not in refused.output

    with open_state_manager("zookeeper", zk_hosts=zookeeper.hosts, zk_root=root,
                            zk_auth_file=auth) as state:
        exercise([*plain, "--zk-auth", str(auth)], state, live_processes, while_running)
    assert not copy.exists(), "heron kill left the digest's copy behind"


def test_a_zookeeper_that_does_not_answer_is_a_clear_error(real_engine, sweep):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once the socket closes
    began = time.monotonic()
    result = heron("list", "--state-manager", "zookeeper", "--zk", f"127.0.0.1:{port}")
    assert result.exit_code == 1
    assert f"127.0.0.1:{port}" in result.output and "did not answer" in result.output
    assert "Traceback" not in result.output
    assert time.monotonic() - began < 30


def test_a_killed_scheduler_service_is_started_again_and_so_is_the_topology(
        real_engine, sweep, live_processes, isolated_imports):
    """kill -9 of a local topology's scheduler service: its executors follow it out (no
    process may outlive it), its supervisor starts it again, and the new service starts
    the containers again from the stored plans; `heron kill` then stops everything."""
    import os
    import signal

    from engine.common.process import read_pid_file
    from engine.scheduler.supervise import SERVING_MARKER

    pids = real_engine / "topologies" / "wordcount" / "pids"
    with open_state_manager("local", root=real_engine / "state") as state:
        result = heron("submit", "local", str(WORDCOUNT), "-o", "wordcount.seed=7")
        assert result.exit_code == 0, result.output
        try:
            assert wait_until(lambda: spout_emitted(state, "wordcount") > 1000)
            for _ in range(2):  # killed again soon after it served: still no backoff
                service = read_pid_file(pids / SERVING_MARKER)
                old_tm = state.get("tmanagers", "wordcount").controller_endpoint
                assert service is not None
                os.kill(service.pid, signal.SIGKILL)
                again = wait_until(lambda: (p := read_pid_file(pids / SERVING_MARKER))
                                   and p.pid != service.pid and p, timeout=60)
                assert again, "the scheduler service was not started again"
                assert wait_until(lambda: (tm := state.get("tmanagers", "wordcount"))
                                  and tm.controller_endpoint != old_tm, timeout=60), \
                    "no new Topology Master"
                assert wait_until(lambda: spout_emitted(state, "wordcount") > 1000,
                                  timeout=60), "the topology did not run again"
            log = (real_engine / "topologies" / "wordcount" / "logs" / "scheduler.log")
            assert log.read_text().count("starting it again in 0.0s") == 2, log.read_text()
            assert "wordcount" in heron("list").output
        finally:
            killed = heron("kill", "wordcount")
        assert killed.exit_code == 0, killed.output
        assert "did not answer" not in killed.output  # the new service answered the kill
        assert state.topologies() == []
    assert wait_until(lambda: not live_processes(), timeout=15), \
        f"processes outlived heron kill: {[p.pid for p in live_processes()]}"
