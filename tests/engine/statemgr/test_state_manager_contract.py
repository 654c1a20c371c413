"""The contract every state manager keeps: the local filesystem one and ZooKeeper.

Each contract test runs against both managers. The ZooKeeper runs use the shared
``zookeeper`` server (tests/conftest.py), each with its own root and a 2 s session, so
an owner that dies loses its ephemeral location within seconds, as a lease does locally.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engine.messages import (
    execution_state_pb2,
    packing_plan_pb2,
    tmanager_pb2,
    topology_pb2,
)
from engine.statemgr import (
    LocalFileSystemStateManager,
    NodeExistsError,
    NoNodeError,
    StateError,
    StateManager,
)

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parents[3]
LEASE_SECS = 1.0
ZK_SESSION_SECS = 2.0
#: How long a dead owner's location may linger: a lease locally, a session in ZooKeeper
#: (the server notices expiry on its next tick after the timeout).
GONE_WITHIN = 10.0


@dataclass
class Store:
    """One backing store and how to open (more) managers on it, here or in a subprocess."""

    kind: str  # "localfs" or "zookeeper"
    open: Callable[[], StateManager]
    owner_args: list[str]  # how the OWNER subprocess opens a manager on the same store
    opened: list[StateManager] = field(default_factory=list)

    def manager(self) -> StateManager:
        manager = self.open()
        self.opened.append(manager)
        return manager


@pytest.fixture(params=["localfs", "zookeeper"])
def store(request, tmp_path):
    if request.param == "localfs":
        root = tmp_path / "state"
        store = Store("localfs", lambda: LocalFileSystemStateManager(root, lease_secs=LEASE_SECS),
                      ["local", str(root)])
        yield store
    else:
        from engine.statemgr.zookeeper import ZooKeeperStateManager

        server = request.getfixturevalue("zookeeper")
        root = f"/heron-test-{uuid.uuid4().hex[:12]}"
        store = Store("zookeeper",
                      lambda: ZooKeeperStateManager(server.hosts, root,
                                                    session_timeout=ZK_SESSION_SECS,
                                                    connect_timeout=5.0),
                      ["zookeeper", server.hosts, root])
        yield store
        from kazoo.client import KazooClient
        client = KazooClient(hosts=server.hosts, timeout=ZK_SESSION_SECS)
        client.start(5)
        try:
            client.delete(root, recursive=True)
        finally:
            client.stop()
            client.close()
    for manager in store.opened:
        manager.close()


@pytest.fixture
def statemgr(store):
    return store.manager()


def location(name="wc", port=1234):
    return tmanager_pb2.TManagerLocation(topology_name=name, host="127.0.0.1", server_port=port)


def wait_until_gone(manager: StateManager, kind: str, name: str,
                    within: float = GONE_WITHIN) -> float:
    """Seconds until the node disappeared; fails the test if it outlived ``within``."""
    start = time.monotonic()
    while manager.get(kind, name) is not None:
        if time.monotonic() - start > within:
            pytest.fail(f"{kind}/{name} still present {within:g}s after its owner died")
        time.sleep(0.1)
    return time.monotonic() - start


# -- the contract --------------------------------------------------------------------------
def test_plans_written_are_read_back(statemgr):
    statemgr.create("topologies", "wc", topology_pb2.Topology(name="wc", id="wc-1"))
    statemgr.create("packingplans", "wc", packing_plan_pb2.PackingPlan(id="p1"))
    assert statemgr.get("topologies", "wc").id == "wc-1"
    statemgr.set("packingplans", "wc", packing_plan_pb2.PackingPlan(id="p2"))
    assert statemgr.get("packingplans", "wc").id == "p2"
    assert statemgr.topologies() == ["wc"]


def test_missing_nodes_read_as_none_and_empty(statemgr):
    assert statemgr.get("pplans", "nothing") is None
    assert statemgr.topologies() == []
    statemgr.delete("pplans", "nothing")  # deleting what is absent is fine


def test_an_empty_message_is_a_present_node(statemgr):
    statemgr.create("executionstate", "wc", execution_state_pb2.ExecutionState())  # b""
    assert statemgr.get("executionstate", "wc") == execution_state_pb2.ExecutionState()
    assert statemgr.get("topologies", "wc") is None


def test_create_refuses_an_existing_node_and_set_a_missing_one(statemgr):
    statemgr.create("topologies", "wc", topology_pb2.Topology(name="wc"))
    with pytest.raises(NodeExistsError, match="topologies/wc"):
        statemgr.create("topologies", "wc", topology_pb2.Topology(name="wc"))
    with pytest.raises(NoNodeError, match="pplans/wc"):
        statemgr.set("pplans", "wc", topology_pb2.Topology())


def test_clean_removes_everything_of_a_topology(statemgr):
    statemgr.create("topologies", "wc", topology_pb2.Topology(name="wc"))
    statemgr.create("topologies", "other", topology_pb2.Topology(name="other"))
    statemgr.create("tmanagers", "wc", location(), ephemeral=True)
    statemgr.clean("wc")
    assert statemgr.topologies() == ["other"]
    assert statemgr.get("tmanagers", "wc") is None


def test_names_with_slashes_are_rejected(statemgr):
    with pytest.raises(StateError, match="invalid topology name"):
        statemgr.get("topologies", "../etc")


def test_ephemeral_location_disappears_when_its_owner_closes(store, statemgr):
    other = store.open()
    try:
        other.create("tmanagers", "wc", location(), ephemeral=True)
        assert statemgr.get("tmanagers", "wc").server_port == 1234
        with pytest.raises(NodeExistsError):
            statemgr.create("tmanagers", "wc", location(port=1), ephemeral=True)
    finally:
        other.close()
    assert statemgr.get("tmanagers", "wc") is None
    statemgr.create("tmanagers", "wc", location(port=99), ephemeral=True)  # a new owner
    assert statemgr.get("tmanagers", "wc").server_port == 99


# An owner in its own process, so it can be killed as a Topology Master would be.
OWNER = f"""
import sys, time
from engine.messages import tmanager_pb2
from engine.statemgr import open_state_manager
kind, *where = sys.argv[1:]
if kind == "local":
    m = open_state_manager("local", root=where[0], lease_secs={LEASE_SECS!r})
else:
    m = open_state_manager("zookeeper", zk_hosts=where[0], zk_root=where[1],
                           zk_session_timeout={ZK_SESSION_SECS!r})
m.create("tmanagers", "wc", tmanager_pb2.TManagerLocation(topology_name="wc"), ephemeral=True)
print("ready", flush=True)
time.sleep(60)
"""


def start_owner(store: Store) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", OWNER, *store.owner_args], cwd=REPO,
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if line != "ready":
        proc.kill()
        proc.wait(10)
        pytest.fail(f"the owner process did not start (said {line!r}, exit {proc.returncode})")
    return proc


def test_ephemeral_location_disappears_when_its_owner_is_killed(store, statemgr):
    proc = start_owner(store)
    try:
        assert statemgr.get("tmanagers", "wc") is not None
        time.sleep(1.5)  # the owner keeps its lease / session alive meanwhile
        assert statemgr.get("tmanagers", "wc") is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        wait_until_gone(statemgr, "tmanagers", "wc")
        statemgr.create("tmanagers", "wc", location(port=7), ephemeral=True)  # a new owner
    finally:
        proc.kill()
        proc.wait(10)
        proc.stdout.close()


def test_ephemeral_location_expires_when_its_owner_stops_renewing(store, statemgr):
    proc = start_owner(store)
    try:
        assert statemgr.get("tmanagers", "wc") is not None
        proc.send_signal(signal.SIGSTOP)  # alive but frozen: no renewals, no heartbeats
        wait_until_gone(statemgr, "tmanagers", "wc")
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait(10)
        proc.stdout.close()
