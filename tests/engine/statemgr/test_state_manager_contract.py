"""The contract every state manager keeps (local filesystem now; ZooKeeper joins later)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from engine.messages import packing_plan_pb2, tmanager_pb2, topology_pb2
from engine.statemgr import LocalFileSystemStateManager, NodeExistsError, NoNodeError, StateError

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=["localfs"])
def statemgr(request, tmp_path):
    manager = LocalFileSystemStateManager(tmp_path / "state", lease_secs=1.0)
    yield manager
    manager.close()


def location(name="wc", port=1234):
    return tmanager_pb2.TManagerLocation(topology_name=name, host="127.0.0.1", server_port=port)


def test_plans_written_are_read_back(statemgr):
    statemgr.create("topologies", "wc", topology_pb2.Topology(name="wc", id="wc-1"))
    statemgr.create("packingplans", "wc", packing_plan_pb2.PackingPlan(id="p1"))
    assert statemgr.get("topologies", "wc").id == "wc-1"
    statemgr.set("packingplans", "wc", packing_plan_pb2.PackingPlan(id="p2"))
    assert statemgr.get("packingplans", "wc").id == "p2"
    assert statemgr.topologies() == ["wc"]


def test_create_refuses_an_existing_node_and_set_a_missing_one(statemgr):
    statemgr.create("topologies", "wc", topology_pb2.Topology(name="wc"))
    with pytest.raises(NodeExistsError, match="topologies/wc"):
        statemgr.create("topologies", "wc", topology_pb2.Topology(name="wc"))
    with pytest.raises(NoNodeError, match="pplans/wc"):
        statemgr.set("pplans", "wc", topology_pb2.Topology())


def test_clean_removes_everything_of_a_topology(statemgr):
    statemgr.create("topologies", "wc", topology_pb2.Topology(name="wc"))
    statemgr.create("tmanagers", "wc", location(), ephemeral=True)
    statemgr.clean("wc")
    assert statemgr.topologies() == []
    assert statemgr.get("tmanagers", "wc") is None


def test_names_with_slashes_are_rejected(statemgr):
    with pytest.raises(StateError, match="invalid topology name"):
        statemgr.get("topologies", "../etc")


def test_ephemeral_location_disappears_when_its_owner_closes(statemgr, tmp_path):
    other = LocalFileSystemStateManager(tmp_path / "state", lease_secs=1.0)
    other.create("tmanagers", "wc", location(), ephemeral=True)
    assert statemgr.get("tmanagers", "wc").server_port == 1234
    with pytest.raises(NodeExistsError):
        statemgr.create("tmanagers", "wc", location(port=1), ephemeral=True)
    other.close()
    assert statemgr.get("tmanagers", "wc") is None
    statemgr.create("tmanagers", "wc", location(port=99), ephemeral=True)  # a new owner


OWNER = """
import sys, time
from engine.statemgr import LocalFileSystemStateManager
from engine.messages import tmanager_pb2
m = LocalFileSystemStateManager(sys.argv[1], lease_secs=1.0)
m.create("tmanagers", "wc", tmanager_pb2.TManagerLocation(topology_name="wc"), ephemeral=True)
print("ready", flush=True)
time.sleep(60)
"""


def start_owner(root):
    proc = subprocess.Popen([sys.executable, "-c", OWNER, str(root)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def test_ephemeral_location_disappears_when_its_owner_is_killed(statemgr, tmp_path):
    proc = start_owner(tmp_path / "state")
    try:
        assert statemgr.get("tmanagers", "wc") is not None
        time.sleep(1.5)  # the owner keeps renewing its lease
        assert statemgr.get("tmanagers", "wc") is not None
        proc.kill()
        proc.wait(10)
        assert statemgr.get("tmanagers", "wc") is None
    finally:
        proc.kill()
        proc.wait(10)


def test_ephemeral_location_expires_when_its_owner_stops_renewing(statemgr, tmp_path):
    proc = start_owner(tmp_path / "state")
    try:
        proc.send_signal(signal.SIGSTOP)  # alive but frozen: no renewals
        deadline = time.monotonic() + 5
        while statemgr.get("tmanagers", "wc") is not None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert statemgr.get("tmanagers", "wc") is None
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait(10)
