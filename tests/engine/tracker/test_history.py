"""Time windows from the tracker's snapshots: counters as increases (a restarted
process's counter counted from zero), gauges as their latest value, the baseline taken
at or before the window's start, and bounded memory."""

from __future__ import annotations

import itertools

from engine.tmanager.client import MetricsSnapshot
from engine.tools.tracker.history import (
    MetricsHistory,
    TopologyHistory,
    is_counter,
    parse_value,
    window,
)


def snap(t: float, **values: dict[str, str]) -> MetricsSnapshot:
    return MetricsSnapshot(time=t, values={i: dict(v) for i, v in values.items()},
                           components={i: "spout" for i in values})


def test_counters_and_gauges_are_told_apart_by_name():
    assert is_counter("__emit-count") and is_counter("__time-spouts-paused-ms")
    assert is_counter("__tuples-sent") and is_counter("__trees-completed")
    assert not is_counter("__complete-latency") and not is_counter("__backpressure")
    assert not is_counter("__buffered-bytes") and not is_counter("__last-error")
    # the Stream Manager's per-instance metrics (Heron's names, read by the Health Manager)
    assert is_counter("__time_spent_back_pressure_by_compid/container_1_slow_3")
    assert not is_counter("__connection_buffer_by_instanceid/container_1_slow_3/bytes")


def test_values_become_numbers_unless_they_are_text():
    assert parse_value("12") == 12 and isinstance(parse_value("12"), int)
    assert parse_value("1.5") == 1.5
    assert parse_value("ValueError: boom") == "ValueError: boom"
    assert parse_value("nan") == "nan"  # not a JSON number


def test_a_window_reports_counter_increases_and_latest_gauges():
    before = snap(100.0, a={"__emit-count": "10", "__complete-latency": "5.0"})
    after = snap(160.0, a={"__emit-count": "70", "__complete-latency": "7.5",
                           "__last-error": "ValueError: x"})
    result = window(after, before)
    assert result.start == 100.0 and result.end == 160.0
    assert result.values["a"] == {"__emit-count": 60, "__complete-latency": 7.5,
                                  "__last-error": "ValueError: x"}


def test_all_time_is_the_cumulative_values():
    after = snap(160.0, a={"__emit-count": "70"})
    result = window(after, None)
    assert result.start is None and result.values["a"]["__emit-count"] == 70


def test_a_counter_that_went_down_restarted_from_zero():
    before = snap(100.0, a={"__emit-count": "500"})
    after = snap(110.0, a={"__emit-count": "40"}, b={"__emit-count": "9"})
    result = window(after, before)
    assert result.values["a"]["__emit-count"] == 40
    assert result.values["b"]["__emit-count"] == 9  # appeared inside the window


def test_the_baseline_is_the_newest_snapshot_at_or_before_the_window_start():
    history = TopologyHistory("id-1", max_age=1000, min_spacing=1)
    for t in (100, 110, 120, 130):
        history.add(snap(t, a={"__emit-count": str(t)}))
    assert history.baseline(130, 15).time == 110
    assert history.baseline(130, 20).time == 110
    assert history.baseline(130, 500).time == 100  # not watched that long: the oldest
    assert history.baseline(100, 5) is None  # nothing before the answer itself


def test_history_is_bounded_in_age_and_spacing():
    history = TopologyHistory("id-1", max_age=30, min_spacing=5)
    for t in range(100):
        history.add(snap(float(t), a={"__emit-count": str(t)}))
    times = [s.time for s in history.snapshots]
    assert times[-1] == 99.0
    assert times[0] >= 99 - 30
    assert all(b - a >= 5 for a, b in itertools.pairwise(times[:-1]))
    assert len(times) <= 30 // 5 + 2
    history.add(snap(50.0, a={"__emit-count": "1"}))  # an answer older than the newest
    assert history.snapshots[-1].time == 99.0


def test_a_resubmitted_topology_starts_a_new_history():
    history = MetricsHistory(max_age=1000, min_spacing=1)
    history.record("t", "id-1", snap(100, a={"__emit-count": "1000"}))
    history.record("t", "id-2", snap(110, a={"__emit-count": "5"}))
    result = history.window("t", "id-2", snap(120, a={"__emit-count": "25"}), 60)
    assert result.start == 110 and result.values["a"]["__emit-count"] == 20
    # asking with the old id finds nothing to compare with: an empty window
    empty = history.window("t", "id-1", snap(120, a={"__emit-count": "25"}), 60)
    assert empty.values["a"]["__emit-count"] == 0
    history.forget_except([])
    assert history.timeline("t", "id-2", 0, 200) == []
