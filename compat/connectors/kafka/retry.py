"""When a failed tuple is emitted again: Storm's ``KafkaSpoutRetryExponentialBackoff``.

The first retry waits ``initial`` ms, the n-th (n >= 2) ``period * 2**(n-1)`` ms, never
more than ``max_delay`` ms; a message that failed more than ``max_retries`` times (-1:
never give up, Storm's default) is not scheduled and the spout acks it, so offsets past
it can be committed. The defaults (0, 2 ms, 10 s, forever) are Storm's.
"""
from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

MsgId = TypeVar("MsgId", bound=Hashable)

__all__ = ["RetrySchedule"]


class RetrySchedule(Generic[MsgId]):
    """Failed message ids and when each may be retried; ``clock`` is seconds (monotonic)."""

    def __init__(self, initial_ms: int = 0, period_ms: int = 2, max_delay_ms: int = 10_000,
                 max_retries: int = -1, clock: Callable[[], float] = time.monotonic) -> None:
        self.initial = initial_ms / 1000.0
        self.period = period_ms / 1000.0
        self.max_delay = max_delay_ms / 1000.0
        self.max_retries = max_retries
        self.clock = clock
        self._due: dict[MsgId, float] = {}
        self._heap: list[tuple[float, MsgId]] = []

    def delay(self, fails: int) -> float:
        """Seconds to wait before retrying a message that has failed ``fails`` times."""
        if fails <= 1:
            wait = self.initial
        else:
            wait = self.period * (2.0 ** min(fails - 1, 64))
        return min(wait, self.max_delay)

    def schedule(self, msg_id: MsgId, fails: int) -> bool:
        """Schedule a retry for the ``fails``-th failure; False when retries are used up."""
        if 0 <= self.max_retries < fails:
            self.remove(msg_id)
            return False
        due = self.clock() + self.delay(fails)
        self._due[msg_id] = due
        heapq.heappush(self._heap, (due, msg_id))
        return True

    def remove(self, msg_id: MsgId) -> None:
        """Forget a message (retried, acked, or its partition revoked)."""
        self._due.pop(msg_id, None)

    def is_scheduled(self, msg_id: MsgId) -> bool:
        return msg_id in self._due

    def is_ready(self, msg_id: MsgId) -> bool:
        due = self._due.get(msg_id)
        return due is not None and due <= self.clock()

    def __len__(self) -> int:
        return len(self._due)

    def ready(self) -> list[MsgId]:
        """Scheduled ids whose time has come, earliest due first (they stay scheduled
        until :meth:`remove`)."""
        now = self.clock()
        out = []
        for due, msg_id in sorted(self._heap):
            if due > now:
                break
            if self._due.get(msg_id) == due:
                out.append(msg_id)
        self._compact()
        return out

    def _compact(self) -> None:
        if len(self._heap) > 2 * len(self._due) + 64:
            self._heap = [(d, m) for d, m in self._heap if self._due.get(m) == d]
            heapq.heapify(self._heap)

    def retain(self, keep: Callable[[MsgId], bool]) -> None:
        """Drop scheduled ids ``keep`` refuses (the partitions this task no longer owns)."""
        for msg_id in [m for m in self._due if not keep(m)]:
            del self._due[msg_id]
        self._compact()
