"""Which offsets of one partition may be committed: Storm's ``OffsetManager``.

Under AT_LEAST_ONCE a partition's committed offset (Kafka's meaning: the next offset to
read) may only move past records whose tuples were acked, so a restart never skips an
un-acked record. Tuples are acked in any order; this keeps, per partition, the offsets
polled since the last commit (``tracked``: emitted, or acked without being emitted, as a
null tuple or an undecodable record is) and those acked, and finds the end of the
contiguous acked run after the committed offset.

Offsets need not be contiguous: compaction removes records and a transactional producer's
commit markers take offsets no consumer sees. Every record polled is tracked before
anything later in its partition, so an offset below the lowest tracked one that is
neither tracked nor acked does not exist as a record, and the run steps over it (as
Storm's ``findNextCommitOffset`` does with its ``emittedOffsets.ceiling``).
"""
from __future__ import annotations

from bisect import bisect_left

__all__ = ["OffsetManager"]


class OffsetManager:
    """Acked and committed offsets of one topic-partition (not thread safe).

    ``committed`` is the offset the next commit starts after (the first offset not known
    processed): the fetch position at assignment, or None until the first record is
    tracked when the spout started at a logical position (beginning, end) whose number
    it did not look up.
    """

    __slots__ = ("committed", "_tracked", "_acked", "committed_once")

    def __init__(self, committed: int | None = None) -> None:
        self.committed = committed
        self._tracked: list[int] = []   # sorted, each >= committed
        self._acked: set[int] = set()   # a subset of _tracked
        #: whether this manager ever committed (Storm's ``hasCommitted``)
        self.committed_once = False

    def track(self, offset: int) -> bool:
        """Record that ``offset`` was polled and is being emitted; False when it is at or
        below what is committed, or already tracked (a re-polled record to skip)."""
        if self.committed is None:
            self.committed = offset
        elif offset < self.committed:
            return False
        tracked = self._tracked
        if tracked and tracked[-1] < offset:
            tracked.append(offset)
            return True
        i = bisect_left(tracked, offset)
        if i < len(tracked) and tracked[i] == offset:
            return False
        tracked.insert(i, offset)
        return True

    def is_tracked(self, offset: int) -> bool:
        i = bisect_left(self._tracked, offset)
        return i < len(self._tracked) and self._tracked[i] == offset

    def is_acked(self, offset: int) -> bool:
        return offset in self._acked

    def ack(self, offset: int) -> bool:
        """Mark a tracked offset acked; False (and nothing changes) when it is not tracked
        (committed already, or never polled by this task)."""
        if not self.is_tracked(offset):
            return False
        self._acked.add(offset)
        return True

    def next_commit_offset(self) -> int | None:
        """The offset to commit (one past the end of the contiguous acked run after
        ``committed``), or None when nothing new may be committed."""
        if self.committed is None:
            return None
        nxt = self.committed
        tracked, acked = self._tracked, self._acked
        i = bisect_left(tracked, nxt)
        while i < len(tracked):
            offset = tracked[i]
            if offset not in acked:
                break
            nxt = offset + 1  # offsets between the previous one and this one do not exist
            i += 1
        return nxt if nxt > self.committed else None

    def lowest_unacked(self) -> int | None:
        """The lowest tracked offset not yet acked, or None."""
        for offset in self._tracked:
            if offset not in self._acked:
                return offset
        return None

    def commit(self, offset: int) -> int:
        """The broker confirmed a commit of ``offset``: forget what lies below it. Returns
        how many tracked offsets that released."""
        if self.committed is not None and offset <= self.committed:
            return 0
        i = bisect_left(self._tracked, offset)
        released = self._tracked[:i]
        del self._tracked[:i]
        self._acked.difference_update(released)
        self.committed = offset
        self.committed_once = True
        return len(released)

    @property
    def uncommitted(self) -> int:
        """Offsets polled and not yet committed (Storm's ``getNumUncommittedOffsets``)."""
        return len(self._tracked)

    def nth_uncommitted(self, n: int) -> int | None:
        """The ``n``-th (1-based) uncommitted offset, or None when there are fewer: a retry
        at or below it stays within ``max.uncommitted.offsets``."""
        return self._tracked[n - 1] if 0 < n <= len(self._tracked) else None

    def __repr__(self) -> str:
        return (f"OffsetManager(committed={self.committed}, tracked={len(self._tracked)}, "
                f"acked={len(self._acked)})")
