"""Retry backoff (Storm's KafkaSpoutRetryExponentialBackoff) and the round-robin partition
assignment (Storm's RoundRobinManualPartitioner), without a broker."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compat.connectors.kafka.partitions import discover, round_robin
from compat.connectors.kafka.positions import (
    BEGINNING,
    END,
    commit_metadata,
    committed_by,
    first_poll_offset,
)
from compat.connectors.kafka.retry import RetrySchedule


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_backoff_is_exponential_and_capped():
    schedule = RetrySchedule(initial_ms=5, period_ms=2, max_delay_ms=100)
    assert [round(schedule.delay(n) * 1000) for n in range(1, 9)] == [5, 4, 8, 16, 32, 64, 100,
                                                                      100]


def test_a_failed_message_is_ready_only_after_its_delay():
    clock = Clock()
    schedule = RetrySchedule(initial_ms=0, period_ms=100, clock=clock)
    assert schedule.schedule(("t", 0, 7), fails=2)  # 100 ms * 2
    assert schedule.ready() == [] and not schedule.is_ready(("t", 0, 7))
    clock.now += 0.25
    assert schedule.ready() == [("t", 0, 7)] and schedule.is_ready(("t", 0, 7))
    schedule.remove(("t", 0, 7))
    assert schedule.ready() == [] and len(schedule) == 0


def test_retries_stop_after_max_retries():
    schedule = RetrySchedule(max_retries=2)
    assert schedule.schedule("m", 1) and schedule.schedule("m", 2)
    assert not schedule.schedule("m", 3)
    assert not schedule.is_scheduled("m")
    assert RetrySchedule(max_retries=-1).schedule("m", 10_000)


@given(st.sets(st.tuples(st.sampled_from("abc"), st.integers(0, 20)), max_size=40),
       st.integers(1, 7))
def test_round_robin_splits_partitions_with_no_overlap(partitions, tasks):
    shares = [round_robin(partitions, i, tasks) for i in range(tasks)]
    flat = [tp for share in shares for tp in share]
    assert sorted(flat) == sorted(partitions)
    assert len(flat) == len(set(flat))
    assert max(map(len, shares)) - min(map(len, shares)) <= 1


def test_round_robin_deals_sorted_partitions_in_turn():
    parts = [("b", 0), ("a", 1), ("a", 0), ("b", 1), ("a", 2)]
    assert round_robin(parts, 0, 2) == [("a", 0), ("a", 2), ("b", 1)]
    assert round_robin(parts, 1, 2) == [("a", 1), ("b", 0)]
    with pytest.raises(ValueError):
        round_robin(parts, 2, 2)


def test_discover_names_missing_topics_and_matches_whole_names():
    meta = {"orders": SimpleNamespace(partitions={0: 0, 1: 1}, error=None),
            "orders-dlq": SimpleNamespace(partitions={0: 0}, error=None),
            "__consumer_offsets": SimpleNamespace(partitions={0: 0}, error=None)}
    assert discover(meta, ["orders", "nope"]) == ([("orders", 0), ("orders", 1)], ["nope"])
    assert discover(meta, pattern=re.compile("orders")) == ([("orders", 0), ("orders", 1)], [])
    assert discover(meta, pattern=re.compile(".*"))[0] == [("orders", 0), ("orders", 1),
                                                          ("orders-dlq", 0)]


@pytest.mark.parametrize("strategy, committed, ours, expected", [
    ("EARLIEST", None, False, BEGINNING),
    ("EARLIEST", 7, False, BEGINNING),   # another topology's commit: deployment applies
    ("EARLIEST", 7, True, 7),            # this topology's commit: resume
    ("LATEST", None, False, END),
    ("LATEST", 7, False, END),
    ("LATEST", 7, True, 7),
    ("UNCOMMITTED_EARLIEST", None, False, BEGINNING),
    ("UNCOMMITTED_EARLIEST", 7, False, 7),
    ("UNCOMMITTED_LATEST", None, False, END),
    ("UNCOMMITTED_LATEST", 7, False, 7),
])
def test_first_poll_offset_is_storms_do_seek(strategy, committed, ours, expected):
    assert first_poll_offset(strategy, committed, ours) == expected


def test_commit_metadata_is_storms_json_and_names_the_submission():
    metadata = commit_metadata("wc-3-1700000000", 4)
    assert committed_by(metadata, "wc-3-1700000000")
    assert not committed_by(metadata, "wc-4-1700000999")
    assert not committed_by(None, "wc-3-1700000000")
    assert not committed_by("written by another client", "wc-3-1700000000")
