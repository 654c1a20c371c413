"""The AT_LEAST_ONCE half of KafkaSpout: acks, fails and retries, the bound on uncommitted
offsets, and the commits of contiguous acked offsets (Storm's KafkaSpout, ``ack``,
``fail``, ``commitOffsetsForAckedTuples``, ``pollablePartitions``).

A mixin of :class:`~compat.connectors.kafka.spout.KafkaSpout`, which sets the attributes
used here in ``initialize``; it keeps this module's logic apart from the polling loop.
Commits are asynchronous but counted only once the broker confirmed them (librdkafka's
commit callback, run inside ``consume``/``poll`` on the spout's thread), one in flight at
a time: a commit never passes an un-acked offset, and a broker that stops answering
delays commits without blocking ``next_tuple``.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .offsets import OffsetManager
    from .retry import RetrySchedule
    from .settings import SpoutSettings

__all__ = ["AtLeastOnce"]

log = logging.getLogger("compat.connectors.kafka.spout")


class AtLeastOnce:
    """Message ids ``(topic, partition, offset)``; see the module docstring."""

    # set by KafkaSpout.initialize
    _ck: Any
    _consumer: Any
    _name: str
    settings: SpoutSettings
    _metadata: str
    _alo: bool
    _managers: dict[tuple[str, int], OffsetManager]
    _pending: set[tuple[str, int, int]]
    _fails: dict[tuple[str, int, int], int]
    _retry: RetrySchedule[tuple[str, int, int]]
    _seeked: dict[tuple[str, int], tuple[int, float]]
    _paused: set[tuple[str, int]]
    _held: dict[tuple[str, int], int]
    _in_flight: bool

    def ack(self, tup_id: Any) -> None:
        msg_id = tuple(tup_id)
        if msg_id not in self._pending:
            return  # of a revoked partition, or acked twice
        self._pending.discard(msg_id)
        self._fails.pop(msg_id, None)
        manager = self._managers.get(msg_id[:2])
        if manager is not None:
            manager.ack(msg_id[2])

    def fail(self, tup_id: Any) -> None:
        msg_id = tuple(tup_id)
        if msg_id not in self._pending:
            return
        self._pending.discard(msg_id)
        fails = self._fails[msg_id] = self._fails.get(msg_id, 0) + 1
        if not self._retry.schedule(msg_id, fails):
            log.warning("%s: record %s/%d@%d failed %d times (spout.retry.max.retries); "
                        "acking it", self._name, msg_id[0], msg_id[1], msg_id[2], fails)
            self._fails.pop(msg_id, None)
            manager = self._managers.get(msg_id[:2])
            if manager is not None:
                manager.ack(msg_id[2])

    def _seek_retries(self, now: float) -> None:
        """Seek each partition with a tuple due for retry back to its earliest one (once
        per offset and second: the records come back through the next polls)."""
        earliest: dict[tuple[str, int], int] = {}
        for topic, partition, offset in self._retry.ready():
            tp = (topic, partition)
            earliest[tp] = min(offset, earliest.get(tp, offset))
        for tp, offset in earliest.items():
            last = self._seeked.get(tp)
            if last is not None and last[0] == offset and now - last[1] < 1.0:
                continue
            try:
                self._consumer.seek(self._ck.TopicPartition(tp[0], tp[1], offset))
                self._seeked[tp] = (offset, now)
            except self._ck.KafkaException as exc:
                log.debug("%s: seek %s/%d@%d for a retry: %s", self._name, *tp, offset, exc)

    def _limit_uncommitted(self) -> None:
        """Pause partitions holding ``max.uncommitted.offsets`` uncommitted offsets (unless a
        retry within that bound is due), resume the others (Storm 2's pollable partitions)."""
        limit = self.settings.max_uncommitted
        over = {tp for tp, m in self._managers.items() if m.uncommitted >= limit}
        if over and len(self._retry):
            for topic, partition, offset in self._retry.ready():
                bound = self._managers[(topic, partition)].nth_uncommitted(limit) \
                    if (topic, partition) in self._managers else None
                if bound is not None and offset <= bound:
                    over.discard((topic, partition))
        if over == self._paused:
            return
        TP = self._ck.TopicPartition
        if over - self._paused:
            self._consumer.pause([TP(t, p) for t, p in over - self._paused])
        if self._paused - over:
            self._consumer.resume([TP(t, p) for t, p in self._paused - over])
        self._paused = over

    def _hold_back(self, tp: tuple[str, int], offset: int) -> None:
        """Pause ``tp`` and seek it back to ``offset`` (the first record of this batch not
        emitted), so the records held back are read again once commits catch up."""
        if tp not in self._paused:
            self._consumer.pause([self._ck.TopicPartition(*tp)])
            self._paused.add(tp)
        if tp not in self._held:
            self._held[tp] = offset
            try:
                self._consumer.seek(self._ck.TopicPartition(tp[0], tp[1], offset))
            except self._ck.KafkaException as exc:
                log.debug("%s: seek %s/%d@%d to hold back: %s", self._name, *tp, offset, exc)

    def _commit_acked(self) -> None:
        """Commit every partition's contiguous acked run; counted committed only when the
        broker confirms (``_on_commit``), one commit in flight at a time."""
        if self._in_flight:
            return
        TP = self._ck.TopicPartition
        offsets = [TP(t, p, o, metadata=self._metadata) for (t, p), m in self._managers.items()
                   if (o := m.next_commit_offset()) is not None]
        if offsets:
            self._in_flight = True
            self._consumer.commit(offsets=offsets, asynchronous=True)

    def _on_commit(self, error: Any, partitions: list[Any]) -> None:
        """librdkafka's commit callback (run inside consume/poll, on this thread)."""
        if not self._alo:
            return
        self._in_flight = False
        if error is not None:
            log.warning("%s: offset commit failed (%s); trying again next period",
                        self._name, error)
            return
        for tp in partitions:
            manager = self._managers.get((tp.topic, tp.partition))
            if tp.error is None and manager is not None and tp.offset >= 0:
                manager.commit(tp.offset)
