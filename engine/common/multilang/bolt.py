"""Storm's ShellBolt: a bolt whose code runs in a subprocess.

Asynchronous, as in Storm: ``execute`` queues the tuple for the writer
thread and returns; the process answers whenever it likes (emits, acks,
fails, logs, errors, metrics, and ``sync`` for heartbeats).  The reader
thread only queues what arrives; the collector is not thread-safe, so
every collector call happens on the engine's thread, in ``execute`` and in
``poll``, which the engine's executor calls when its inbox is idle.  The
reader calls ``wake`` (when given) on each arrival so the executor can poll
at once instead of at its next idle tick.

Liveness is judged on the engine thread too: a process that sends nothing
within ``topology.subprocess.timeout.secs`` (heartbeats are sent about
every second, and any message counts as an answer), or that exits, fails
the task with ``ComponentFailure``; so does a message the collector
refuses (acking an unknown id, anchoring to a finished tuple...), which
would kill a Storm worker.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from compat.storm_api.tuple import Tuple
from engine.config.keys import SUBPROCESS_TIMEOUT_KEY, WORKER_TIMEOUT_KEY

from .dispatch import MessageDispatcher
from .errors import HeartbeatTimeout, ShellError
from .failure import component_failure
from .framing import Framing
from .process import ShellProcess
from .writer import BoltWriter

__all__ = ["ShellBoltHost", "Activity", "HEARTBEAT_INTERVAL_SECS"]

log = logging.getLogger(__name__)

HEARTBEAT_INTERVAL_SECS = 1.0
#: How long a blocked ``execute`` sleeps between looking at responses and liveness.
_BLOCKED_POLL_SECS = 0.1
#: How long a write failure waits for the reader to report the exit in more detail.
_WRITE_ERROR_GRACE_SECS = 2.0


class Activity:
    """Called by the bridge's threads when there is something for the engine thread.

    Sets an event a blocked ``execute`` waits on, then calls the engine's
    ``wake`` callback (if any).
    """

    def __init__(self, wake: Callable[[], None] | None = None) -> None:
        self.event = threading.Event()
        self._wake = wake

    def __call__(self) -> None:
        self.event.set()
        if self._wake is not None:
            try:
                self._wake()
            except Exception:  # an engine bug must not stop the bridge's threads
                log.exception("the wake callback of a shell bolt raised")


class ShellBoltHost:
    """A shell bolt behind the engines' ``HostedBolt`` interface (plus ``poll``).

    ``component`` is the component's name (there is no Python instance).
    """

    def __init__(self, process: ShellProcess, dispatcher: MessageDispatcher, framing: Framing,
                 component: str, task_id: Any, timeout: float, max_pending: int, activity: Activity,
                 heartbeat_interval: float = HEARTBEAT_INTERVAL_SECS,
                 on_close: Callable[[], None] | None = None) -> None:
        self.process = process
        self.component = component
        self.task_id = task_id
        self._dispatch = dispatcher.dispatch
        self._encode = framing.encode
        self._framing_name = framing.name
        self._timeout = timeout
        self._activity = activity
        self._on_close = on_close
        self._failure: BaseException | None = None
        self._closed = False
        self._writer = BoltWriter(process, max_pending, heartbeat_interval, activity)

    @property
    def pid(self) -> int:
        return self.process.pid

    def make_tuple(self, id: Any, component: Any, stream: str, task: int, values: Any) -> Tuple:
        """Values stay a plain sequence: the subprocess builds its own namedtuples."""
        return Tuple(id, component, stream, task, values)

    def execute(self, tup: Tuple) -> None:
        """Queue ``tup`` for the subprocess, handling whatever it has sent meanwhile.

        Blocks while ``topology.shellbolt.max.pending`` tuples wait to be
        written, still handling responses and watching liveness.
        """
        if self._failure is not None:
            raise self._failure
        try:
            data = self._encode_tuple(tup)
            self._service()
            offer = self._writer.offer
            event = self._activity.event
            while not offer(data):
                event.wait(_BLOCKED_POLL_SECS)
                event.clear()
                self._service()
        except Exception as exc:
            self._fail(exc)

    def poll(self) -> None:
        """Handle what the subprocess sent and check it is alive (engine thread only)."""
        if self._failure is not None:
            raise self._failure
        try:
            self._service()
        except Exception as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        self._failure = component_failure(self.component, self.task_id, exc)
        raise self._failure from exc

    def _encode_tuple(self, tup: Tuple) -> bytes:
        try:
            return self._encode({"id": tup.id, "comp": tup.component, "stream": tup.stream,
                                 "task": tup.task, "tuple": list(tup.values)})
        except (TypeError, ValueError, OverflowError) as exc:
            raise ShellError(
                f"a tuple from {tup.component!r} on stream {tup.stream!r} cannot be sent to the "
                f"subprocess with the {self._framing_name} multi-lang serializer: {exc}; "
                f"values: {tup.values!r}") from None

    def _service(self) -> None:
        """Dispatch every queued message, in order, then check liveness."""
        process = self.process
        next_message = process.next_message
        dispatch = self._dispatch
        while True:
            message = next_message(0)  # raises the reader's final error in its place
            if message is None:
                break
            if message.get("command") == "sync":
                continue  # a heartbeat answer; arriving at all was the point
            task_ids = dispatch(message)
            if task_ids is not None:
                self._writer.put_task_ids(self._encode(task_ids))
        now = time.monotonic()
        silent = now - process.last_seen
        if silent > self._timeout:
            raise HeartbeatTimeout(
                f"subprocess heartbeat timeout: bolt subprocess {process.describe()} sent "
                f"nothing for {silent:.1f} s (limit {self._timeout:g} s: "
                f"{SUBPROCESS_TIMEOUT_KEY} or {WORKER_TIMEOUT_KEY})")
        writer = self._writer
        error, error_at = writer.error, writer.error_at  # the writer thread sets both
        if error is not None and error_at is not None and now - error_at > _WRITE_ERROR_GRACE_SECS:
            raise error

    def close(self) -> None:
        """Stop the writer and the subprocess, reap it, remove its pid directory."""
        if self._closed:
            return
        self._closed = True
        try:
            stopped = self._writer.stop(timeout=0.2)
            self.process.stop()
            if not stopped:
                self._writer.join(2.0)  # unblocked by the process's exit
        finally:
            if self._on_close is not None:
                self._on_close()
