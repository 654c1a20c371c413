"""Non-blocking sends with per-destination queues.

A send never blocks the Stream Manager's loop: when a peer's socket is full the message
waits in that destination's queue (and everything later for that destination queues
behind it, so order per path is kept). The bytes waiting, and how long the oldest of
them has waited, are what backpressure is measured on: per destination (a slow
instance or peer is what backpressure reacts to) and in total (what the Stream Manager
holds).

A destination the ``credits`` ledger limits (a local bolt instance) is also sent tuple
batches only while it has read credit (engine.common.network.credits): a batch without credit
waits in the same queue, and so does everything behind it (a checkpoint marker stays
behind the data it follows). Messages that are not data spend no credit.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable, Hashable
from typing import Any

import zmq

from engine.common.network.credits import CreditLedger

log = logging.getLogger("heron.stmgr")


class Outbox:
    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 credits: CreditLedger | None = None) -> None:
        self._clock = clock
        #: read credit per local bolt instance (None: nothing limited)
        self.credits = credits
        #: destination -> deque of (frames, bytes, when queued, credit bytes it spends)
        self._queues: dict[Hashable, collections.deque] = {}
        self._sockets: dict[Hashable, zmq.Socket] = {}
        self.buffered_bytes = 0
        #: bytes waiting per destination (only destinations with a queue)
        self.queued_bytes: dict[Hashable, int] = {}
        self.dropped = 0

    def send(self, key: Hashable, sock: zmq.Socket, frames: list[Any], data: int = 0) -> None:
        """Send ``frames`` to ``key`` now, or queue them behind what waits for it.
        ``data``: the bytes of tuple batch the message carries (what it spends of a
        credit-limited destination's read credit; 0 for everything else)."""
        queue = self._queues.get(key)
        if queue:
            size = _size(frames)
            queue.append((frames, size, self._clock(), data))
            self.buffered_bytes += size
            self.queued_bytes[key] += size
            return
        credits = self.credits
        if data and credits is not None and not credits.may_send(key):
            self._queue(key, sock, frames, data)
            return
        try:
            sock.send_multipart(frames, zmq.NOBLOCK, copy=False)
        except zmq.Again:
            self._queue(key, sock, frames, data)
            return
        except zmq.ZMQError as exc:
            self.dropped += 1
            log.warning("dropped a message to %s: %s", key, exc)
            return
        if data and credits is not None:
            credits.spend(key, data)

    def _queue(self, key: Hashable, sock: zmq.Socket, frames: list[Any], data: int) -> None:
        size = _size(frames)
        self._queues.setdefault(key, collections.deque()).append((frames, size,
                                                                  self._clock(), data))
        self._sockets[key] = sock
        self.buffered_bytes += size
        self.queued_bytes[key] = self.queued_bytes.get(key, 0) + size

    def pending(self) -> bool:
        return self.buffered_bytes > 0

    def largest_instance_queue(self) -> int:
        """Bytes waiting for the most backed-up local instance (keys that are instance
        identities, bytes; peers are keyed by their id, str)."""
        return max((n for k, n in self.queued_bytes.items() if isinstance(k, bytes)), default=0)

    def waited(self) -> dict[Hashable, float]:
        """Seconds the oldest message of each queue has waited (destinations with a queue)."""
        now = self._clock()
        return {key: now - queue[0][2] for key, queue in self._queues.items()}

    def longest_wait(self) -> tuple[Hashable | None, float]:
        """The destination whose oldest message has waited longest, and how long."""
        if not self._queues:
            return None, 0.0
        key, oldest = min(((k, q[0][2]) for k, q in self._queues.items()), key=lambda kv: kv[1])
        return key, self._clock() - oldest

    def longest_instance_wait(self) -> float:
        """Seconds the oldest message for a local instance (bytes keys) has waited."""
        now = self._clock()
        return max((now - q[0][2] for k, q in self._queues.items() if isinstance(k, bytes)),
                   default=0.0)

    def largest_queue(self) -> tuple[Hashable | None, int]:
        """The destination with the most bytes waiting, and how many."""
        if not self.queued_bytes:
            return None, 0
        key = max(self.queued_bytes, key=self.queued_bytes.__getitem__)
        return key, self.queued_bytes[key]

    def retry(self) -> None:
        """Send what waits, in order, until each destination is full again."""
        credits = self.credits
        for key, queue in list(self._queues.items()):
            sock = self._sockets[key]
            while queue:
                frames, size, _, data = queue[0]
                if data and credits is not None and not credits.may_send(key):
                    break  # waits for the instance to give credit back
                try:
                    sock.send_multipart(frames, zmq.NOBLOCK, copy=False)
                except zmq.Again:
                    break
                except zmq.ZMQError as exc:
                    self.dropped += 1
                    log.warning("dropped a queued message to %s: %s", key, exc)
                else:
                    if data and credits is not None:
                        credits.spend(key, data)
                queue.popleft()
                self.buffered_bytes -= size
                self.queued_bytes[key] -= size
            if not queue:
                del self._queues[key]
                del self._sockets[key]
                del self.queued_bytes[key]

    def clear(self) -> int:
        """Drop everything waiting (a rollback: it was emitted before it); how many
        messages. Not counted as dropped: the rollback replays it."""
        count = sum(len(q) for q in self._queues.values())
        self._queues.clear()
        self._sockets.clear()
        self.queued_bytes.clear()
        self.buffered_bytes = 0
        return count

    def forget(self, key: Hashable) -> None:
        """A destination went away (socket replaced): its queue cannot be delivered."""
        queue = self._queues.pop(key, None)
        self._sockets.pop(key, None)
        self.queued_bytes.pop(key, None)
        if queue:
            self.buffered_bytes -= sum(entry[1] for entry in queue)
            self.dropped += len(queue)


def _size(frames: list[Any]) -> int:
    return sum(len(f) for f in frames)
