"""The Stream Manager's per-instance metrics under Heron's names, which the Health
Manager reads to find the bolt that is the bottleneck: cumulative milliseconds each
local instance's queue kept the manager in backpressure (high/low watermark hysteresis
per instance), and the bytes waiting for each instance now."""

from __future__ import annotations

from types import SimpleNamespace

from engine.stmgr.backpressure import InstanceBackpressure
from engine.stmgr.manager import StreamManager


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_instance_causes_backpressure_from_high_until_under_low():
    clock = Clock()
    bp = InstanceBackpressure(high=1000, low=500, clock=clock)
    bp.update({b"a": 999, b"b": 10})
    assert bp.causing() == set() and bp.total_ms(b"a") == 0
    bp.update({b"a": 1000})
    clock.now += 2.0
    bp.update({b"a": 600})          # between the watermarks: still causing it
    assert bp.causing() == {b"a"} and bp.total_ms(b"a") == 2000
    clock.now += 1.5
    bp.update({})                   # queue drained (the outbox drops empty keys)
    assert bp.causing() == set()
    clock.now += 10.0
    assert bp.total_ms(b"a") == 3500 and bp.total_ms(b"b") == 0


def test_totals_accumulate_over_episodes_and_survive_forget():
    clock = Clock()
    bp = InstanceBackpressure(high=10, low=5, clock=clock)
    for _ in range(3):
        bp.update({b"a": 50})
        clock.now += 1.0
        bp.update({b"a": 0})
        clock.now += 1.0
    bp.update({b"a": 50})
    clock.now += 0.25
    bp.forget(b"a")
    clock.now += 5.0
    assert bp.total_ms(b"a") == 3250 and not bp.causing()


def test_stream_manager_publishes_both_metrics_for_every_local_instance():
    clock = Clock()
    manager = StreamManager.__new__(StreamManager)
    manager.instances = {b"container_1_slow_3": (None, None),
                         b"container_1_slow_4": (None, None)}
    manager.outbox = SimpleNamespace(queued_bytes={b"container_1_slow_3": 4096})
    manager.instance_bp = InstanceBackpressure(high=4096, low=1024, clock=clock)
    manager.instance_bp.update(manager.outbox.queued_bytes)
    clock.now += 0.75
    assert dict(manager._instance_metrics()) == {
        "__time_spent_back_pressure_by_compid/container_1_slow_3": 750,
        "__connection_buffer_by_instanceid/container_1_slow_3/bytes": 4096,
        "__time_spent_back_pressure_by_compid/container_1_slow_4": 0,
        "__connection_buffer_by_instanceid/container_1_slow_4/bytes": 0,
    }
