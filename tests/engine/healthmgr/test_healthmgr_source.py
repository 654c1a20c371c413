"""SnapshotHistory: the Topology Master's polls kept for a window, read per instance."""

from __future__ import annotations

import pytest

from engine.healthmgr.metrics import (
    BACK_PRESSURE,
    BACK_PRESSURE_INITIATED,
    EXECUTE_COUNT,
    UNBLAMED_BACK_PRESSURE,
    WAIT_QUEUE,
)
from engine.healthmgr.sensors import back_pressure_sensor
from engine.healthmgr.source import SnapshotHistory
from engine.healthmgr.topology import ComponentView

I1, I2 = "container_1_count_1", "container_2_count_2"
COMPONENTS = {I1: "count", I2: "count", "stmgr-1": "__stmgr__", "stmgr-2": "__stmgr__",
              "container_1_split_3": "split"}


def poll(history: SnapshotHistory, t: float, executed: int, bp_ms: int) -> None:
    history.record(t, {
        I1: {EXECUTE_COUNT: str(executed), "__last-error": "boom"},
        I2: {EXECUTE_COUNT: str(executed * 2)},
        "container_1_split_3": {EXECUTE_COUNT: "999"},
        "stmgr-1": {BACK_PRESSURE.format(instance=I1): str(bp_ms),
                    WAIT_QUEUE.format(instance=I1): "512"},
        "stmgr-2": {BACK_PRESSURE.format(instance=I1): "5"},  # after a move: both report
    }, COMPONENTS)


def test_instance_metrics_come_from_the_instance_itself():
    h = SnapshotHistory(keep_secs=100)
    poll(h, 1.0, 10, 0)
    poll(h, 2.0, 20, 0)
    got = h.fetch("count", EXECUTE_COUNT, 0.0, 10.0)
    assert got == {I1: [(1.0, 10.0), (2.0, 20.0)], I2: [(1.0, 20.0), (2.0, 40.0)]}


def test_per_instance_stream_manager_metrics_are_summed_over_stream_managers():
    h = SnapshotHistory(keep_secs=100)
    poll(h, 1.0, 10, 300)
    assert h.fetch("count", BACK_PRESSURE, 0.0, 10.0) == {I1: [(1.0, 305.0)]}
    assert h.fetch("count", WAIT_QUEUE, 0.0, 10.0) == {I1: [(1.0, 512.0)]}


def test_fetch_keeps_only_the_window_and_old_polls_are_dropped():
    h = SnapshotHistory(keep_secs=10)
    for t in range(0, 30, 5):
        poll(h, float(t), t, 0)
    assert len(h) == 3  # 15, 20, 25: older than 25 - 10 are gone
    assert [t for t, _ in h.fetch("count", EXECUTE_COUNT, 18.0, 25.0)[I1]] == [20.0, 25.0]


def test_polls_must_arrive_in_time_order():
    h = SnapshotHistory(keep_secs=10)
    poll(h, 5.0, 1, 0)
    with pytest.raises(ValueError):
        poll(h, 4.0, 1, 0)


# -- backpressure the Stream Manager blamed no instance for (engine/healthmgr/blame.py) --

SLOW, PEER, OTHER = "container_2_slow_2", "container_2_slow_4", "container_1_slow_3"
LAYOUT = {SLOW: "slow", PEER: "slow", OTHER: "slow", "stmgr-1": "__stmgr__",
          "stmgr-2": "__stmgr__"}


def stmgr(history: SnapshotHistory, t: float, held2: float, blamed: float = 0.0,
           queue: float = 0.0, held1: float = 0.0, peer_queue: float = 0.0) -> None:
    """One poll: stmgr-2 hosts SLOW and PEER, stmgr-1 hosts OTHER; ``held*`` are the
    managers' cumulative ms of backpressure initiated, ``blamed`` SLOW's cumulative ms."""
    history.record(t, {
        "stmgr-2": {BACK_PRESSURE_INITIATED: str(held2),
                    BACK_PRESSURE.format(instance=SLOW): str(blamed),
                    BACK_PRESSURE.format(instance=PEER): "0",
                    WAIT_QUEUE.format(instance=SLOW): str(queue),
                    WAIT_QUEUE.format(instance=PEER): str(peer_queue)},
        "stmgr-1": {BACK_PRESSURE_INITIATED: str(held1),
                    BACK_PRESSURE.format(instance=OTHER): "0",
                    WAIT_QUEUE.format(instance=OTHER): "0"},
        SLOW: {EXECUTE_COUNT: "0"}, PEER: {EXECUTE_COUNT: "0"}, OTHER: {EXECUTE_COUNT: "0"},
    }, LAYOUT)


def back_pressure(history: SnapshotHistory, now: float) -> dict[str, float]:
    view = ComponentView("slow", {SLOW: 2, PEER: 2, OTHER: 1})
    return {i: round(s.mean(), 3)
            for i, s in back_pressure_sensor(60.0).read(history, view, now).items()}


def test_time_watermark_pauses_blamed_on_nobody_are_owed_to_the_instance_with_bytes_waiting():
    # the e2e_restart picture under byte credits: stmgr-2 keeps the spouts paused all
    # along (its slow instance's oldest message waited past the time watermark) while
    # the bytes waiting for it stay under the high watermark, so it blames nobody
    h = SnapshotHistory(keep_secs=100)
    for k in range(6):
        stmgr(h, float(k), held2=900.0 * k, queue=15_000 - 1000 * k)
    assert back_pressure(h, 5.0) == {SLOW: 900.0, PEER: 0.0, OTHER: 0.0}
    assert h.fetch("slow", UNBLAMED_BACK_PRESSURE, 0.0, 5.0)[SLOW][-1] == (5.0, 4500.0)


def test_blamed_time_is_not_counted_twice_and_the_rest_is_shared_by_bytes_waiting():
    h = SnapshotHistory(keep_secs=100)
    stmgr(h, 0.0, held2=0.0, blamed=0.0, queue=0.0, peer_queue=0.0)
    # 1000 ms held, 400 of them blamed on SLOW; 600 shared 3:1 by the bytes waiting
    stmgr(h, 1.0, held2=1000.0, blamed=400.0, queue=6000.0, peer_queue=2000.0)
    assert back_pressure(h, 1.0) == {SLOW: 400.0 + 450.0, PEER: 150.0, OTHER: 0.0}


def test_no_share_without_bytes_waiting_and_the_reading_stays_capped():
    h = SnapshotHistory(keep_secs=100)
    # held for a peer Stream Manager's queue (no local bytes waiting): no evidence
    stmgr(h, 0.0, held2=0.0)
    stmgr(h, 1.0, held2=800.0, held1=800.0)
    assert back_pressure(h, 1.0) == {SLOW: 0.0, PEER: 0.0, OTHER: 0.0}
    # blamed and unblamed together never read as more than 1000 ms per second
    stmgr(h, 2.0, held2=1800.0, blamed=1000.0, queue=25_000.0)
    assert back_pressure(h, 2.0)[SLOW] == 500.0  # (0 + 1000) / 2 polls


def test_a_restarted_stream_manager_counts_from_zero_again():
    h = SnapshotHistory(keep_secs=100)
    stmgr(h, 0.0, held2=50_000.0, queue=9000.0)
    stmgr(h, 1.0, held2=300.0, queue=9000.0)  # restarted: 300 ms since
    assert back_pressure(h, 1.0)[SLOW] == 300.0
