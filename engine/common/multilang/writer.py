"""The writing side of a shell bolt: Storm's BoltWriterRunnable and its queue.

Storm's ShellBolt never writes on the executor thread.  ``execute`` puts the
tuple into a queue of at most ``topology.shellbolt.max.pending`` messages
(``ShellBoltMessageQueue``) and a writer thread moves them to the pipe, task
ids first (the process is blocked waiting for them), and a heartbeat tuple
about every second.  We do the same, for the same reasons:

* a process that stops reading fills the pipe; only the writer thread
  blocks, so the engine thread keeps handling responses and can still
  notice that the process went silent;
* heartbeats keep flowing while the engine thread is busy elsewhere.

Storm bounds the tuples *not yet written*, not the tuples not yet acked,
and so do we: a tick-driven batching bolt legitimately holds more than 100
unacked tuples until its next tick, and a bound on unacked tuples would
keep that tick out for ever.

A failed write (the process closed stdin, usually because it exited) stops
the writer and is kept in :attr:`error`; the reader normally reports the
exit first, with more detail.
"""
from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from random import getrandbits

from .errors import ShellError
from .process import ShellProcess

__all__ = ["BoltWriter", "HEARTBEAT_STREAM", "heartbeat_message"]

HEARTBEAT_STREAM = "__heartbeat"
SYSTEM_TASK_ID = -1


def heartbeat_message() -> dict:
    """The heartbeat tuple Storm sends; the process answers with ``sync``."""
    return {"id": str(getrandbits(63)), "comp": None, "stream": HEARTBEAT_STREAM,
            "task": SYSTEM_TASK_ID, "tuple": []}


class BoltWriter:
    """Owns all writes to a bolt subprocess once the handshake is done."""

    def __init__(self, process: ShellProcess, capacity: int, heartbeat_interval: float,
                 on_progress: Callable[[], None]) -> None:
        self._process = process
        self._capacity = capacity
        self._interval = heartbeat_interval
        self._on_progress = on_progress
        self._cond = threading.Condition()
        self._tuples: collections.deque[bytes] = collections.deque()
        self._task_ids: collections.deque[bytes] = collections.deque()
        self._stopping = False
        self.error: ShellError | None = None
        self.error_at: float | None = None
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"multilang-writer-{process.popen.pid}")
        self._thread.start()

    def offer(self, data: bytes) -> bool:
        """Queue an encoded tuple unless ``capacity`` of them are waiting."""
        with self._cond:
            if len(self._tuples) >= self._capacity:
                return False
            self._tuples.append(data)
            self._cond.notify()
            return True

    def put_task_ids(self, data: bytes) -> None:
        """Queue an encoded task-id reply; it goes before any waiting tuple."""
        with self._cond:
            self._task_ids.append(data)
            self._cond.notify()

    def _next_item(self, deadline: float) -> bytes | None:
        with self._cond:
            while not (self._stopping or self._task_ids or self._tuples):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)
            if self._stopping:
                raise _Stop
            if self._task_ids:
                return self._task_ids.popleft()
            return self._tuples.popleft()

    def _run(self) -> None:
        process = self._process
        next_heartbeat = time.monotonic() + self._interval
        try:
            while True:
                item = self._next_item(next_heartbeat)
                if item is not None:
                    process.write(item)
                    self._on_progress()  # room in the queue: a blocked execute can go on
                now = time.monotonic()
                if now >= next_heartbeat:
                    process.send(heartbeat_message())
                    next_heartbeat = now + self._interval
        except _Stop:
            return
        except ShellError as exc:
            self.error = exc
            self.error_at = time.monotonic()
            self._on_progress()

    def stop(self, timeout: float = 1.0) -> bool:
        """Stop writing; True when the thread ended (it may be stuck in a full pipe)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


class _Stop(Exception):
    """Internal: the writer was asked to stop."""
