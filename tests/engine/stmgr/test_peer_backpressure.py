"""Backpressure between Stream Managers across a peer's restart: the pause a replaced
incarnation announced ends with it, and its news read late from a socket (it waited
behind data while this manager was busy) neither pauses the spouts again nor releases
a pause the new incarnation announced. Before, a late "start" from a killed peer paused
the spouts for good: no "stop" would ever come."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import zmq

from engine.common.network import encode
from engine.messages import stmgr_pb2
from engine.stmgr.backpressure import Backpressure
from engine.stmgr.manager import StreamManager
from engine.stmgr.outbox import Outbox


@pytest.fixture
def manager(tmp_path):
    manager = StreamManager.__new__(StreamManager)
    manager.id = "stmgr-1"
    manager.ctx = zmq.Context()
    manager.guard = SimpleNamespace(security=None)
    manager.spec = SimpleNamespace(topology_id="t-1", topology_name="t")
    manager.bp = Backpressure(high=100, low=50)
    manager.outbox = Outbox()
    manager.peers = {}
    manager._replaced_peers = set()
    manager.endpoints = [f"ipc://{tmp_path}/stmgr-2-{n}" for n in range(2)]
    yield manager
    for _, sock in manager.peers.values():
        sock.close(0)
    manager.ctx.term()


def plan(peer_endpoint: str) -> SimpleNamespace:
    return SimpleNamespace(stmgrs=[SimpleNamespace(id="stmgr-1", data_endpoint="ipc://me"),
                                   SimpleNamespace(id="stmgr-2", data_endpoint=peer_endpoint)])


def news(manager: StreamManager, start: bool, endpoint: str | None) -> None:
    message = (stmgr_pb2.StartBackPressureMessage() if start
               else stmgr_pb2.StopBackPressureMessage())
    message.topology_id, message.stmgr = "t-1", "stmgr-2"
    if endpoint is not None:
        message.data_endpoint = endpoint
    manager._peer_backpressure(*encode(message))


def test_news_from_a_replaced_incarnation_is_ignored(manager):
    old, new = manager.endpoints
    manager._connect_peers(plan(old))
    news(manager, True, old)
    assert manager.bp.paused                      # the peer's queue is long: spouts wait
    manager._connect_peers(plan(new))             # it was killed and restarted elsewhere
    assert not manager.bp.paused                  # its pause ended with it
    news(manager, True, old)                      # read late, from the old connection
    assert not manager.bp.paused
    news(manager, True, new)                      # the new incarnation's own news counts
    assert manager.bp.paused
    news(manager, False, old)                     # and a stale "stop" cannot end it
    assert manager.bp.paused
    news(manager, False, new)
    assert not manager.bp.paused


def test_a_peer_that_does_not_say_its_endpoint_is_heard(manager):
    """A Stream Manager of an earlier version sends no endpoint: its news counts."""
    manager._connect_peers(plan(manager.endpoints[0]))
    news(manager, True, None)
    assert manager.bp.paused
    news(manager, False, None)
    assert not manager.bp.paused
