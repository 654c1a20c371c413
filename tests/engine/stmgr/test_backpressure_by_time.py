"""Backpressure by how long a queue's oldest message has waited, as well as by bytes
(``highwatermark.ms``, off by default): a slow bolt that drains 2 MB a second would let
8 MB of words wait four seconds before the byte watermark paused a spout; the time
watermark pauses it after ``highwatermark.ms``, whatever the rate, and lets it go only
when every queue is small *and* fresh."""

from __future__ import annotations

import pytest
import zmq

from engine.config.backpressure import (
    HIGH_MS_KEY,
    LOW_MS_KEY,
    BackpressureConfigError,
    blame_wait_watermarks,
    wait_watermarks,
)
from engine.stmgr.backpressure import Backpressure, InstanceBackpressure
from engine.stmgr.outbox import Outbox


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


class Socket:
    """A zmq socket that is full until ``room`` is set."""

    def __init__(self) -> None:
        self.room = False
        self.sent: list[list[bytes]] = []

    def send_multipart(self, frames, flags=0, copy=True) -> None:
        if not self.room:
            raise zmq.Again()
        self.sent.append(frames)


def test_the_outbox_knows_how_long_each_queue_s_oldest_message_has_waited():
    clock, sock = Clock(), Socket()
    box = Outbox(clock=clock)
    box.send(b"bolt", sock, [b"x" * 10])
    clock.now += 0.030
    box.send(b"bolt", sock, [b"y" * 10])
    box.send("stmgr-2", sock, [b"z"])
    clock.now += 0.020
    assert box.waited() == {b"bolt": pytest.approx(0.050), "stmgr-2": pytest.approx(0.020)}
    assert box.longest_wait() == (b"bolt", pytest.approx(0.050))
    assert box.longest_instance_wait() == pytest.approx(0.050)
    sock.room = True
    box.retry()
    assert box.waited() == {} and box.longest_wait() == (None, 0.0)
    assert sock.sent == [[b"x" * 10], [b"y" * 10], [b"z"]]  # in order, nothing lost


def test_a_small_queue_that_waits_too_long_pauses_the_spouts_until_it_is_fresh():
    clock = Clock()
    bp = Backpressure(high=8 << 20, low=4 << 20, clock=clock, high_secs=0.050, low_secs=0.010)
    assert bp.update(1000, 0.049) is None and not bp.paused
    assert bp.update(1000, 0.050) == "start" and bp.paused
    assert bp.update(10, 0.020) is None and bp.paused    # small, but not fresh yet
    assert bp.update(5 << 20, 0.001) is None and bp.paused  # fresh, but over the low bytes
    clock.now += 1.0
    assert bp.update(10, 0.009) == "stop" and not bp.paused
    assert bp.max_wait == pytest.approx(0.050) and bp.episodes == 1
    assert bp.totals()[0] == pytest.approx(1.0)


def test_bytes_alone_still_start_and_stop_it():
    bp = Backpressure(high=1000, low=500, clock=Clock(), high_secs=0.050, low_secs=0.010)
    assert bp.update(1000, 0.0) == "start"
    assert bp.update(499, 0.0) == "stop"


def test_an_instance_is_blamed_while_its_queue_is_stale():
    clock = Clock()
    bp = InstanceBackpressure(high=1000, low=500, clock=clock, high_secs=0.050, low_secs=0.010)
    bp.update({b"slow": 100, b"fast": 100}, {b"slow": 0.060, b"fast": 0.001})
    assert bp.causing() == {b"slow"}
    clock.now += 0.5
    bp.update({b"slow": 100}, {b"slow": 0.020})
    assert bp.causing() == {b"slow"}
    clock.now += 0.25
    bp.update({}, {})
    assert bp.causing() == set() and bp.total_ms(b"slow") == 750


def test_time_watermarks_default_for_pausing_and_blame_only_when_set():
    assert wait_watermarks({}) == (0.04, pytest.approx(0.008))
    assert blame_wait_watermarks({}) == (float("inf"), float("inf"))
    assert blame_wait_watermarks({HIGH_MS_KEY: 50}) == (0.05, pytest.approx(0.01))
    assert wait_watermarks({HIGH_MS_KEY: 50}) == (0.05, pytest.approx(0.01))
    assert wait_watermarks({HIGH_MS_KEY: 200, LOW_MS_KEY: 20}) == (0.2, 0.02)
    for bad in ({HIGH_MS_KEY: 0}, {HIGH_MS_KEY: 50, LOW_MS_KEY: "5"}, {LOW_MS_KEY: 5},
                {HIGH_MS_KEY: 10, LOW_MS_KEY: 10}):
        with pytest.raises(BackpressureConfigError, match="watermark.ms"):
            wait_watermarks(bad)
