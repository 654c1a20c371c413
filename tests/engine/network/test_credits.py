"""Byte credits between a Stream Manager and its instances (engine.common.network.credits): the
keys and their checks, the ledger's grant / spend / return / reset, the instance's write
credit shared by two threads, a malformed credit logged and ignored, and the Stream
Manager's queue holding data (never control) for an instance without credit."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.common.network.credits import (
    CREDIT,
    CreditLedger,
    WriteCredit,
    decode_credit,
    encode_credit,
)
from engine.common.plan.config_check import check_runtime_config
from engine.common.plan.errors import InvalidConfigError
from engine.config.credits import (
    BOLT_READ_KEY,
    BOLT_WRITE_KEY,
    DEFAULT_BOLT_READ_BYTES,
    DEFAULT_BOLT_WRITE_BYTES,
    DEFAULT_SPOUT_WRITE_BYTES,
    SPOUT_WRITE_KEY,
    Capacities,
    CreditConfigError,
    capacities,
)
from engine.messages import stmgr_pb2
from engine.stmgr.outbox import Outbox
from tests.zmq_pairs import router_and_dealer


def test_defaults_and_keys():
    assert capacities({}) == Capacities(DEFAULT_BOLT_READ_BYTES, DEFAULT_SPOUT_WRITE_BYTES,
                                        DEFAULT_BOLT_WRITE_BYTES)
    got = capacities({BOLT_READ_KEY: 1000, SPOUT_WRITE_KEY: 2000, BOLT_WRITE_KEY: 3000})
    assert (got.bolt_read, got.write("spout"), got.write("bolt")) == (1000, 2000, 3000)


@pytest.mark.parametrize("key", [BOLT_READ_KEY, SPOUT_WRITE_KEY, BOLT_WRITE_KEY])
@pytest.mark.parametrize("value", [0, -1, 1.5, "64k", True, None])
def test_a_bad_value_names_its_key_at_submit(key, value):
    with pytest.raises(CreditConfigError, match=key.replace(".", r"\.")):
        capacities({key: value})
    with pytest.raises(InvalidConfigError, match=key.replace(".", r"\.")):
        check_runtime_config({key: value})


def test_the_ledger_grants_spends_returns_and_resets():
    ledger = CreditLedger(100)
    assert ledger.may_send(b"spout") and not ledger.limits(b"spout")  # never opened
    ledger.open(b"bolt")
    assert ledger.may_send(b"bolt")
    ledger.spend(b"bolt", 60)
    assert ledger.may_send(b"bolt")          # 60 < 100: one more batch may go
    ledger.spend(b"bolt", 60)                # the batch that crosses the capacity
    assert not ledger.may_send(b"bolt") and ledger.max_in_flight == 120
    assert ledger.give_back(b"bolt", 30)
    assert ledger.in_flight[b"bolt"] == 90 and ledger.may_send(b"bolt")
    ledger.open(b"bolt")                     # registered again: full credit
    assert ledger.in_flight[b"bolt"] == 0
    assert ledger.give_back(b"bolt", 50)     # a late return from before: clamped
    assert ledger.in_flight[b"bolt"] == 0
    assert not ledger.give_back(b"unknown", 10) and ledger.ignored == 1
    ledger.close(b"bolt")
    assert not ledger.limits(b"bolt")


def test_credit_messages_round_trip_and_malformed_ones_are_ignored(caplog):
    kind, payload = encode_credit(4096)
    assert kind == CREDIT and decode_credit(payload) == 4096
    with caplog.at_level(logging.WARNING, logger="heron.network"):
        assert decode_credit(b"\xff\xff\xff") is None                      # does not parse
        assert decode_credit(b"") is None                                  # no bytes field
        assert decode_credit(stmgr_pb2.InstanceCredit(bytes=-5).SerializeToString()) is None
    assert caplog.text.count("ignored") == 3


def test_write_credit_waits_for_the_stream_manager_and_resets():
    credit = WriteCredit(100)
    assert credit.acquire(80, lambda: True)
    assert credit.acquire(80, lambda: True)  # 80 < 100: crosses it
    assert credit.in_flight == 160 and credit.max_in_flight == 160
    got = []

    def executor():
        got.append(credit.acquire(10, lambda: True))
    thread = threading.Thread(target=executor)
    thread.start()
    time.sleep(0.05)
    assert not got                       # waiting: nothing read yet
    credit.give_back(80)                 # the Stream Manager read a batch
    thread.join(2)
    assert got == [True] and credit.in_flight == 90
    credit.reset()                       # a new registration: nothing of ours is held
    assert credit.in_flight == 0
    credit.give_back(500)                # late: clamped
    assert credit.in_flight == 0


def test_write_credit_gives_up_when_stopping():
    credit = WriteCredit(10)
    credit.acquire(10, lambda: True)
    began = time.monotonic()
    assert not credit.acquire(1, lambda: time.monotonic() - began < 0.15)
    assert credit.in_flight == 10


@pytest.fixture
def pair():
    with router_and_dealer(b"bolt") as sockets:
        yield sockets


def _received(dealer):
    out = []
    while dealer.poll(50):
        out.append(dealer.recv_multipart())
    return out


def test_data_without_credit_waits_in_order_and_control_spends_none(pair):
    router, dealer = pair
    ledger = CreditLedger(100)
    ledger.open(b"bolt")
    box = Outbox(credits=ledger)
    box.send(b"bolt", router, [b"bolt", b"data", b"a" * 70], data=70)
    box.send(b"bolt", router, [b"bolt", b"data", b"b" * 70], data=70)   # crosses: goes
    box.send(b"bolt", router, [b"bolt", b"plan", b"p"])                  # control: goes
    box.send(b"bolt", router, [b"bolt", b"data", b"c" * 70], data=70)   # no credit: waits
    box.send(b"bolt", router, [b"bolt", b"marker", b"m"])                # behind the data
    assert [f[0] for f in _received(dealer)] == [b"data", b"data", b"plan"]
    assert box.queued_bytes[b"bolt"] > 70 and box.pending()  # what backpressure measures
    box.retry()
    assert _received(dealer) == []                           # still no credit
    ledger.give_back(b"bolt", 70)
    box.retry()
    assert [f[0] for f in _received(dealer)] == [b"data", b"marker"]
    assert not box.pending() and ledger.in_flight[b"bolt"] == 140
    assert ledger.max_in_flight == 140 <= 100 + 70          # capacity plus one batch


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(min_value=1, max_value=3000), min_size=1, max_size=60),
       capacity=st.integers(min_value=1, max_value=5000),
       busy=st.lists(st.booleans(), min_size=1, max_size=8))
def test_credit_given_back_a_quarter_at_a_time_never_stalls_the_sender(sizes, capacity, busy):
    """The real ledger and queue of a Stream Manager against the real read-credit pipe of
    a bolt, which gives credit back only once a quarter of its capacity is owed or before
    it waits: whatever the batch sizes and however often the bolt stays busy, every
    batch arrives, in order, and the bytes in flight never pass the capacity plus one
    batch."""
    from engine.instance.loop import TUPLE_BATCH, ReadCreditPipe

    with router_and_dealer(b"bolt") as (router, dealer):
        ledger = CreditLedger(capacity)
        ledger.open(b"bolt")
        box = Outbox(credits=ledger)
        pipe = ReadCreditPipe(dealer, lambda: True, capacity)
        for n, size in enumerate(sizes):
            box.send(b"bolt", router, [b"bolt", TUPLE_BATCH, n.to_bytes(2, "big") * size],
                     data=2 * size)
        received: list[int] = []
        for step in range(20 * len(sizes) + 20):
            # the Stream Manager: credit that came back, then what waits for it
            while router.poll(0):
                frames = router.recv_multipart()
                assert frames[2] == CREDIT
                ledger.give_back(b"bolt", decode_credit(frames[3]))
            box.retry()
            # the bolt's loop: run what is there, waiting (timeout) only when it is idle
            timeout = 0 if busy[step % len(busy)] else 1
            if pipe.poll(timeout):
                kind, payload = pipe.recv_multipart()
                assert kind == TUPLE_BATCH
                received.append(int.from_bytes(payload[:2], "big"))
            if len(received) == len(sizes) and not box.pending():
                break
        assert received == list(range(len(sizes)))
        assert ledger.max_in_flight <= capacity + 2 * max(sizes)
