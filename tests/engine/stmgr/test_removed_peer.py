"""A physical plan that drops a peer Stream Manager (`heron update --container-number`
to fewer containers; issue 38, defect 12): the Stream Managers that stay forget the
removed peer, its connection and whatever waited for it. Before, they kept it among
their peers: the next backpressure news ("over", say, once the rollback emptied the
queues) was sent to it too, found its socket full of what it never read before it
stopped, and waited in a queue nobody would ever drain; that queue's age kept the time
watermark over for good, so local spouts stayed paused and every later checkpoint was
abandoned (the spouts' "stored" reports are read with the spouts)."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest
import zmq

from engine.common.network import DATA_HWM, bind_router, encode
from engine.messages import stmgr_pb2
from engine.stmgr.backpressure import Backpressure
from engine.stmgr.manager import StreamManager
from engine.stmgr.outbox import Outbox

pytestmark = pytest.mark.timeout(30)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def manager(tmp_path):
    clock = Clock()
    manager = StreamManager.__new__(StreamManager)
    manager.id = "stmgr-1"
    manager.ctx = zmq.Context()
    manager.guard = SimpleNamespace(security=None)
    manager.spec = SimpleNamespace(topology_id="t-1", topology_name="t")
    manager.data_endpoint = "ipc://me"
    manager.bp = Backpressure(high=1_000, low=500, clock=clock, high_secs=0.04,
                              low_secs=0.008)
    manager.outbox = Outbox(clock=clock)
    manager.peers = {}
    manager._replaced_peers = set()
    manager.clock = clock
    #: stmgr-2 stays and reads what it is sent; stmgr-3 (the removed container) is
    #: gone: nothing listens at its endpoint any more
    manager.stmgr2, stmgr2_endpoint = bind_router(manager.ctx, f"ipc://{tmp_path}/stmgr-2")
    manager.endpoints = {"stmgr-2": stmgr2_endpoint, "stmgr-3": f"ipc://{tmp_path}/stmgr-3"}
    yield manager
    for _, sock in manager.peers.values():
        sock.close(0)
    manager.stmgr2.close(0)
    manager.ctx.term()


def plan(manager: StreamManager, *peers: str) -> SimpleNamespace:
    return SimpleNamespace(stmgrs=[SimpleNamespace(id="stmgr-1", data_endpoint="ipc://me"),
                                   *(SimpleNamespace(id=p, data_endpoint=manager.endpoints[p])
                                     for p in peers)])


def drain_stmgr2(manager: StreamManager) -> None:
    while manager.stmgr2.poll(0):
        manager.stmgr2.recv_multipart()


def test_a_plan_without_a_peer_forgets_it_and_backpressure_ends(manager):
    manager._connect_peers(plan(manager, "stmgr-2", "stmgr-3"))
    # the container being removed stopped reading: its socket fills, data queues here
    sock3 = manager.peers["stmgr-3"][1]
    for _ in range(DATA_HWM * 64):
        manager.outbox.send("stmgr-3", sock3, [b"x" * 200])
        if manager.outbox.queued_bytes.get("stmgr-3", 0) >= 1_000:
            break
    assert manager.outbox.queued_bytes["stmgr-3"] >= 1_000
    manager._backpressure()
    assert manager.bp.initiated                      # the queue for stmgr-3 is long

    manager._connect_peers(plan(manager, "stmgr-2"))  # the update's plan: 2 containers
    manager.outbox.clear()                           # the rollback the new plan brings
    manager._backpressure()                          # "over": told to the peers there are
    assert not manager.bp.paused
    for _ in range(10):                              # and it stays over
        manager.clock.now += 0.5
        drain_stmgr2(manager)
        manager.outbox.retry()
        manager._backpressure()
        assert not manager.bp.paused, manager.outbox.queued_bytes
    assert not manager.outbox.pending()
    assert list(manager.peers) == ["stmgr-2"]


def test_late_news_from_a_removed_peer_is_ignored_quietly(manager, caplog):
    """A "start" the removed peer sent before it stopped, read only now: it cannot pause
    the spouts (no "stop" would follow), and it is no malformed message."""
    manager._connect_peers(plan(manager, "stmgr-2", "stmgr-3"))
    manager._connect_peers(plan(manager, "stmgr-2"))
    message = stmgr_pb2.StartBackPressureMessage(topology_id="t-1", stmgr="stmgr-3",
                                                 data_endpoint=manager.endpoints["stmgr-3"])
    with caplog.at_level(logging.INFO, logger="heron.stmgr"):
        manager._peer_backpressure(*encode(message))
    assert not manager.bp.paused
    assert "removed" in caplog.text or "replaced" in caplog.text


def test_a_container_added_again_is_a_peer_again(manager):
    """`--container-number 3` after 2 after 3: the new stmgr-3 is connected afresh, and
    its news counts."""
    manager._connect_peers(plan(manager, "stmgr-2", "stmgr-3"))
    manager._connect_peers(plan(manager, "stmgr-2"))
    manager.endpoints["stmgr-3"] += "-again"
    manager._connect_peers(plan(manager, "stmgr-2", "stmgr-3"))
    assert manager.peers["stmgr-3"][0] == manager.endpoints["stmgr-3"]
    message = stmgr_pb2.StartBackPressureMessage(topology_id="t-1", stmgr="stmgr-3",
                                                 data_endpoint=manager.endpoints["stmgr-3"])
    manager._peer_backpressure(*encode(message))
    assert manager.bp.paused
