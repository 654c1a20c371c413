"""The AT_LEAST_ONCE commit rule (compat/connectors/kafka/offsets.py), without a broker:
a commit never passes an offset whose tuple was not acked, and gaps in the offsets
(compaction, transaction markers) do not stall it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compat.connectors.kafka.offsets import OffsetManager


def test_commit_stops_at_the_lowest_unacked_offset():
    manager = OffsetManager(committed=10)
    for offset in range(10, 16):
        assert manager.track(offset)
    for offset in (10, 11, 13, 14):
        manager.ack(offset)
    assert manager.lowest_unacked() == 12
    assert manager.next_commit_offset() == 12  # 13 and 14 wait for 12
    assert manager.commit(12) == 2
    assert manager.next_commit_offset() is None
    manager.ack(12)
    assert manager.next_commit_offset() == 15
    manager.ack(15)
    assert manager.next_commit_offset() == 16


def test_gaps_in_offsets_are_stepped_over():
    manager = OffsetManager(committed=0)
    for offset in (0, 1, 5, 6, 9):  # 2-4 and 7-8 do not exist (compacted, markers)
        manager.track(offset)
        manager.ack(offset)
    assert manager.next_commit_offset() == 10


def test_unknown_start_is_taken_from_the_first_record():
    manager = OffsetManager()
    assert manager.next_commit_offset() is None
    manager.track(42)
    assert manager.committed == 42
    manager.ack(42)
    assert manager.next_commit_offset() == 43


def test_records_below_the_commit_or_seen_twice_are_not_tracked():
    manager = OffsetManager(committed=5)
    assert not manager.track(4)
    assert manager.track(5)
    assert not manager.track(5)
    assert not manager.ack(7)  # never polled
    assert manager.uncommitted == 1
    assert manager.nth_uncommitted(1) == 5 and manager.nth_uncommitted(2) is None


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 50), st.lists(st.integers(0, 3), min_size=1, max_size=60),
       st.data())
def test_committed_offset_never_passes_an_unacked_one(start, steps, data):
    """Whatever order tuples are acked in and whatever gaps the offsets have, the offset
    offered for commit is never above an offset that was tracked and not acked, and every
    offset below it was acked (or does not exist)."""
    offsets, offset = [], start
    for step in steps:
        offset += step
        offsets.append(offset)
        offset += 1
    offsets = sorted(set(offsets))
    manager = OffsetManager(committed=start)
    for o in offsets:
        manager.track(o)
    acked = data.draw(st.sets(st.sampled_from(offsets)))
    for o in data.draw(st.permutations(sorted(acked))):
        manager.ack(o)
    target = manager.next_commit_offset()
    unacked = [o for o in offsets if o not in acked]
    if target is None:
        assert not offsets or offsets[0] in unacked
        return
    assert all(o >= target for o in unacked)
    assert all(o in acked for o in offsets if o < target)
    assert manager.commit(target) == len([o for o in offsets if o < target])
    assert manager.lowest_unacked() == (min(unacked) if unacked else None)
