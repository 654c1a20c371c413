"""What only the ZooKeeper manager has: Heron's paths under a root, real ephemeral nodes,
bounded failures when the server is absent or goes away, and the factory that picks a
manager by name."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from kazoo.client import KazooClient

from engine.messages import tmanager_pb2, topology_pb2
from engine.statemgr import (
    LocalFileSystemStateManager,
    StateError,
    StateManager,
    ZooKeeperStateManager,
    open_state_manager,
)
from tests.unavailable import unavailable
from tests.zookeeper_server import ZooKeeperServer, free_port, missing_requirements

pytestmark = pytest.mark.timeout(60)


def unique_root() -> str:
    return f"/heron-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def raw(zookeeper):
    """A plain kazoo client on the shared server, to look at what the manager wrote."""
    client = KazooClient(hosts=zookeeper.hosts, timeout=2.0)
    client.start(5)
    yield client
    client.stop()
    client.close()


def assert_no_kazoo_traceback(exc: BaseException) -> None:
    """The error stands alone: no kazoo exception chained to it for a traceback to show."""
    assert type(exc).__module__.startswith("engine.statemgr")
    assert exc.__cause__ is None
    assert exc.__context__ is None or exc.__suppress_context__


def assert_no_kazoo_threads_left(before: set[threading.Thread]) -> None:
    deadline = time.monotonic() + 5
    while True:
        extra = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not extra or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not extra, f"threads left running: {[t.name for t in extra]}"


def test_nodes_follow_herons_layout_under_the_root(zookeeper, raw):
    root = unique_root()
    with ZooKeeperStateManager(zookeeper.hosts, root, session_timeout=2.0) as manager:
        manager.create("topologies", "wc", topology_pb2.Topology(name="wc", id="wc-1"))
        manager.create("tmanagers", "wc", tmanager_pb2.TManagerLocation(topology_name="wc"),
                       ephemeral=True)
        data, stat = raw.get(f"{root}/topologies/wc")
        assert topology_pb2.Topology.FromString(data).id == "wc-1"
        assert stat.ephemeralOwner == 0
        _, stat = raw.get(f"{root}/tmanagers/wc")
        assert stat.ephemeralOwner != 0  # a real ZooKeeper ephemeral node
    assert raw.exists(f"{root}/tmanagers/wc") is None  # closing ended the session
    assert raw.exists(f"{root}/topologies/wc") is not None
    raw.delete(root, recursive=True)


def test_errors_name_the_address_and_the_full_path(zookeeper):
    root = unique_root()
    with ZooKeeperStateManager(zookeeper.hosts, root, session_timeout=2.0) as manager:
        manager.create("topologies", "wc", topology_pb2.Topology(name="wc"))
        with pytest.raises(StateError) as info:
            manager.create("topologies", "wc", topology_pb2.Topology(name="wc"))
        assert zookeeper.hosts in str(info.value) and f"{root}/topologies/wc" in str(info.value)
        manager.clean("wc")


def test_an_address_that_does_not_answer_fails_fast_with_the_address():
    port = free_port()  # bound and released: nobody listens there
    before = set(threading.enumerate())
    start = time.monotonic()
    with pytest.raises(StateError) as info:
        ZooKeeperStateManager(f"127.0.0.1:{port}", connect_timeout=2.0)
    elapsed = time.monotonic() - start
    message = str(info.value)
    assert f"127.0.0.1:{port}" in message and "did not answer within 2s" in message
    assert "--zk HOST:PORT" in message and "\n" not in message
    assert_no_kazoo_traceback(info.value)
    assert elapsed < 6, f"took {elapsed:.1f}s to give up"
    assert_no_kazoo_threads_left(before)


@pytest.mark.parametrize("hosts", ["127.0.0.1:notaport", "", "  "])
def test_a_malformed_address_is_a_state_error(hosts):
    with pytest.raises(StateError, match="HOST:PORT") as info:
        ZooKeeperStateManager(hosts, connect_timeout=1.0)
    assert_no_kazoo_traceback(info.value)


@pytest.mark.parametrize("root", ["heron", ""])
def test_a_relative_root_is_refused(root):
    with pytest.raises(StateError, match="absolute path"):
        ZooKeeperStateManager("127.0.0.1:1", root)


@pytest.fixture
def own_server():
    """A server of this test's own, so stopping it does not disturb the shared one."""
    why = missing_requirements()
    if why:
        unavailable(f"no ZooKeeper server available: {why}")
    server = ZooKeeperServer()
    server.start()
    yield server
    server.stop()


def test_a_server_that_goes_away_gives_a_state_error_not_a_kazoo_traceback(own_server):
    before = set(threading.enumerate())
    manager = ZooKeeperStateManager(own_server.hosts, unique_root(), session_timeout=2.0,
                                    connect_timeout=2.0)
    try:
        manager.create("topologies", "wc", topology_pb2.Topology(name="wc"))
        own_server.stop()
        start = time.monotonic()
        for attempt in (manager.topologies, lambda: manager.get("topologies", "wc"),
                        lambda: manager.set("topologies", "wc", topology_pb2.Topology())):
            with pytest.raises(StateError) as info:
                attempt()
            assert own_server.host in str(info.value)
            assert_no_kazoo_traceback(info.value)
        assert time.monotonic() - start < 15
    finally:
        start = time.monotonic()
        manager.close()
        assert time.monotonic() - start < 5, "close() hung on a dead server"
    assert_no_kazoo_threads_left(before)
    with pytest.raises(StateError, match="closed"):
        manager.get("topologies", "wc")


# -- the factory ---------------------------------------------------------------------------
def test_factory_opens_the_local_manager(tmp_path):
    manager = open_state_manager("local", root=tmp_path / "state", lease_secs=3.0)
    try:
        assert isinstance(manager, LocalFileSystemStateManager)
        assert manager.root == tmp_path / "state" and manager.lease_secs == 3.0
        manager.create("topologies", "wc", topology_pb2.Topology(name="wc"))
        assert manager.topologies() == ["wc"]
    finally:
        manager.close()


def test_factory_opens_the_zookeeper_manager(zookeeper, raw):
    root = unique_root()
    manager: StateManager = open_state_manager("zookeeper", zk_hosts=zookeeper.hosts,
                                               zk_root=root, zk_session_timeout=2.0)
    try:
        assert isinstance(manager, ZooKeeperStateManager)
        assert manager.session_timeout == 2.0
        manager.create("topologies", "wc", topology_pb2.Topology(name="wc"))
        assert raw.exists(f"{root}/topologies/wc") is not None
    finally:
        manager.close()
        raw.delete(root, recursive=True)


def test_factory_wants_an_address_for_zookeeper():
    with pytest.raises(StateError, match="--zk HOST:PORT"):
        open_state_manager("zookeeper")


@pytest.mark.parametrize("kind", ["etcd", "localfs", ""])
def test_factory_refuses_unknown_kinds_and_lists_the_known(kind):
    with pytest.raises(StateError, match="kinds: local, zookeeper"):
        open_state_manager(kind)
