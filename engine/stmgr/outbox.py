"""Non-blocking sends with per-destination queues.

A send never blocks the Stream Manager's loop: when a peer's socket is full the message
waits in that destination's queue (and everything later for that destination queues
behind it, so order per path is kept). The bytes waiting are what backpressure is
measured on.
"""

from __future__ import annotations

import collections
import logging
from typing import Any, Hashable

import zmq

log = logging.getLogger("heron.stmgr")


class Outbox:
    def __init__(self) -> None:
        self._queues: dict[Hashable, collections.deque] = {}
        self._sockets: dict[Hashable, zmq.Socket] = {}
        self.buffered_bytes = 0
        self.dropped = 0

    def send(self, key: Hashable, sock: zmq.Socket, frames: list[Any]) -> None:
        queue = self._queues.get(key)
        if queue:
            queue.append(frames)
            self.buffered_bytes += _size(frames)
            return
        try:
            sock.send_multipart(frames, zmq.NOBLOCK, copy=False)
        except zmq.Again:
            self._queues.setdefault(key, collections.deque()).append(frames)
            self._sockets[key] = sock
            self.buffered_bytes += _size(frames)
        except zmq.ZMQError as exc:
            self.dropped += 1
            log.warning("dropped a message to %s: %s", key, exc)

    def pending(self) -> bool:
        return self.buffered_bytes > 0

    def retry(self) -> None:
        """Send what waits, in order, until each destination is full again."""
        for key, queue in list(self._queues.items()):
            sock = self._sockets[key]
            while queue:
                frames = queue[0]
                try:
                    sock.send_multipart(frames, zmq.NOBLOCK, copy=False)
                except zmq.Again:
                    break
                except zmq.ZMQError as exc:
                    self.dropped += 1
                    log.warning("dropped a queued message to %s: %s", key, exc)
                queue.popleft()
                self.buffered_bytes -= _size(frames)
            if not queue:
                del self._queues[key]
                del self._sockets[key]

    def forget(self, key: Hashable) -> None:
        """A destination went away (socket replaced): its queue cannot be delivered."""
        queue = self._queues.pop(key, None)
        self._sockets.pop(key, None)
        if queue:
            self.buffered_bytes -= sum(_size(f) for f in queue)
            self.dropped += len(queue)


def _size(frames: list[Any]) -> int:
    return sum(len(f) for f in frames)
