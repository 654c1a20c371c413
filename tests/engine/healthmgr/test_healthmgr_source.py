"""SnapshotHistory: the Topology Master's polls kept for a window, read per instance."""

from __future__ import annotations

import pytest

from engine.healthmgr.metrics import BACK_PRESSURE, EXECUTE_COUNT, WAIT_QUEUE
from engine.healthmgr.source import SnapshotHistory

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
