"""The Stream Manager's side of the byte credits (engine.common.network.credits): a bolt's read
credit comes back in an InstanceCredit and a malformed one is logged and ignored; each
batch read from an instance is owed back to it as write credit, sent straight to the
socket after a round of reading (never behind data) once a quarter of the smaller write
capacity is owed; a registration starts afresh."""

from __future__ import annotations

import logging

from engine.common.network.credits import CREDIT, CreditLedger, decode_credit, encode_credit
from engine.messages import stmgr_pb2
from engine.stmgr.manager import TUPLE_BATCH, StreamManager
from engine.stmgr.outbox import Outbox
from tests.zmq_pairs import router_and_dealer


def _manager() -> StreamManager:
    manager = StreamManager.__new__(StreamManager)
    manager.credits = CreditLedger(1000)
    manager.outbox = Outbox(credits=manager.credits)
    manager._owed_credit = {}
    manager._give_back_at = 1
    manager._warned = set()
    manager.stateful = None
    manager.instances = {}
    manager.largest_batch_bytes = 0
    manager.routed = []
    manager._route_batch = manager.routed.append
    return manager


class Frame:
    def __init__(self, data: bytes) -> None:
        self.bytes = data

    def __len__(self) -> int:
        return len(self.bytes)


def _frames(identity: bytes, kind: bytes, payload: bytes) -> list[Frame]:
    return [Frame(identity), Frame(kind), Frame(payload)]


def test_read_credit_comes_back_and_a_malformed_one_is_ignored(caplog):
    manager = _manager()
    manager.credits.open(b"bolt")
    manager.credits.spend(b"bolt", 900)
    manager._from_instance(None, _frames(b"bolt", *encode_credit(400)))
    assert manager.credits.in_flight[b"bolt"] == 500
    with caplog.at_level(logging.WARNING):
        manager._from_instance(None, _frames(b"bolt", CREDIT, b"\xff\xff"))
        manager._from_instance(None, _frames(
            b"bolt", CREDIT, stmgr_pb2.InstanceCredit(bytes=0).SerializeToString()))
        manager._from_instance(None, _frames(b"stranger", *encode_credit(10)))
    assert manager.credits.in_flight[b"bolt"] == 500      # nothing granted or taken
    assert "malformed credit" in caplog.text and "not a registered bolt" in caplog.text


def test_batches_read_are_owed_back_as_write_credit_in_one_message():
    with router_and_dealer(b"spout") as (router, dealer):
        manager = _manager()
        for size in (300, 200):
            manager._from_instance(router, _frames(b"spout", TUPLE_BATCH, b"x" * size))
        assert len(manager.routed) == 2 and manager._owed_credit[b"spout"][1] == 500
        manager._give_write_credit()
        assert not manager._owed_credit
        kind, payload = dealer.recv_multipart()
        assert kind == CREDIT and decode_credit(payload) == 500
        assert not dealer.poll(20)


def test_write_credit_goes_back_once_enough_is_owed():
    """Returned per batch, credit messages were as many as the batches; held until a
    quarter of the capacity is owed, a busy spout gets it back in a few messages."""
    with router_and_dealer(b"spout") as (router, dealer):
        manager = _manager()
        manager._give_back_at = 1000
        manager._from_instance(router, _frames(b"spout", TUPLE_BATCH, b"x" * 600))
        manager._give_write_credit()
        assert manager._owed_credit[b"spout"][1] == 600 and not dealer.poll(20)
        manager._from_instance(router, _frames(b"spout", TUPLE_BATCH, b"x" * 500))
        manager._give_write_credit()
        assert not manager._owed_credit
        kind, payload = dealer.recv_multipart()
        assert kind == CREDIT and decode_credit(payload) == 1100
