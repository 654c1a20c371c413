"""Storm's ShellSpout: a spout whose code runs in a subprocess.

Strictly sequential, as in Storm: each call writes one command
(``{"command": "next"|"ack"|"fail"|"activate"|"deactivate", "id": ...}``,
``id`` being ``""`` when there is none) and then handles what the process
sends, on the calling (engine) thread, until its ``sync``.  Emits asking
for task ids (the default) are answered before the next message is read,
because the process blocks until it has them.

There are no heartbeat messages for spouts: the ``sync`` is the heartbeat.
While a call waits, each message must follow the previous one (or the
command) within the subprocess timeout, which is how Storm's spout
heartbeat timer judges it; a silent process fails the task.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.config.keys import SUBPROCESS_TIMEOUT_KEY, WORKER_TIMEOUT_KEY

from .dispatch import MessageDispatcher
from .errors import HeartbeatTimeout, PipeClosed
from .failure import component_failure
from .process import ShellProcess

__all__ = ["ShellSpoutHost"]

#: How long a failed write waits for the reader's report of the exit.
_EXIT_REPORT_WAIT_SECS = 2.0


class ShellSpoutHost:
    """A shell spout behind the engines' ``HostedSpout`` interface.

    ``component`` is the component's name (there is no Python instance).
    Calls must not overlap; every collector call happens inside them.
    """

    def __init__(self, process: ShellProcess, dispatcher: MessageDispatcher, component: str,
                 task_id: Any, timeout: float, on_close: Callable[[], None] | None = None) -> None:
        self.process = process
        self.component = component
        self.task_id = task_id
        self._dispatch = dispatcher.dispatch
        self._timeout = timeout
        self._on_close = on_close
        self._failure: BaseException | None = None
        self._closed = False

    @property
    def pid(self) -> int:
        return self.process.pid

    def next_tuple(self) -> None:
        self._command("next", "")

    def ack(self, tup_id: Any) -> None:
        self._command("ack", tup_id)

    def fail(self, tup_id: Any) -> None:
        self._command("fail", tup_id)

    def activate(self) -> None:
        self._command("activate", "")

    def deactivate(self) -> None:
        self._command("deactivate", "")

    def is_exhausted(self) -> bool:
        """Shell spouts cannot say they are done: the protocol has no word for it."""
        return False

    def _command(self, command: str, tup_id: Any) -> None:
        if self._failure is not None:
            raise self._failure
        try:
            self._exchange(command, tup_id)
        except Exception as exc:  # the process failed, or the collector refused an emit
            self._failure = component_failure(self.component, self.task_id, exc)
            raise self._failure from exc

    def _exchange(self, command: str, tup_id: Any) -> None:
        process = self.process
        self._send({"command": command, "id": tup_id})
        dispatch = self._dispatch
        while True:
            message = process.next_message(self._timeout)
            if message is None:
                raise HeartbeatTimeout(
                    f"subprocess heartbeat timeout: spout subprocess {process.describe()} sent "
                    f"nothing for {self._timeout:g} s while answering {command!r} "
                    f"({SUBPROCESS_TIMEOUT_KEY} or {WORKER_TIMEOUT_KEY})")
            if message.get("command") == "sync":
                return
            task_ids = dispatch(message)
            if task_ids is not None:
                self._send(task_ids)

    def _send(self, message: Any) -> None:
        try:
            self.process.send(message)
        except PipeClosed as exc:  # it exited: say how, rather than "broken pipe"
            raise self.process.wait_for_end(_EXIT_REPORT_WAIT_SECS) or exc from None

    def close(self) -> None:
        """Stop and reap the subprocess and remove its pid directory."""
        if self._closed:
            return
        self._closed = True
        try:
            self.process.stop()
        finally:
            if self._on_close is not None:
                self._on_close()
