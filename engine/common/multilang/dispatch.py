"""Turn one message from a multi-lang subprocess into collector calls.

This is the reading half of Storm's ShellSpout/ShellBolt (and of its
``JsonSerializer.readShellMsg``), with Storm's defaults:

* ``stream`` absent means ``"default"``; ``task`` absent or 0 means not
  direct;
* ``need_task_ids`` absent means **true**: the target task ids are returned
  so the host writes them back (never for direct emits, which Storm does not
  answer);
* ``anchors`` may be a list of input ids or one id; bolts only;
* ``log`` without a usable ``level`` is INFO (2);
* spouts reject ``ack``/``fail`` and unknown commands as Storm's ShellSpout
  does ("Unknown command received"); bolts ignore unknown commands as
  ShellBolt does, with a warning here so the mistake is visible.

``sync`` is not handled here: for a spout it ends a command's reply and for
a bolt it is a heartbeat answer, both the hosts' business.  Errors the
collector raises (double ack, anchoring to a finished tuple, undeclared
stream...) propagate unchanged for the host to report.
"""
from __future__ import annotations

import logging
from typing import Any

from compat.storm_api.collector import OutputCollector

from .errors import ShellProtocolError

__all__ = ["MessageDispatcher", "DEFAULT_STREAM", "STORM_LOG_INFO"]

DEFAULT_STREAM = "default"
STORM_LOG_INFO = 2
_STORM_LOG_LEVELS = range(0, 5)  # trace, debug, info, warn, error


class MessageDispatcher:
    """Applies a component's messages to its collector; ``kind`` is 'spout' or 'bolt'."""

    def __init__(self, kind: str, collector: OutputCollector, logger: logging.Logger) -> None:
        if kind not in ("spout", "bolt"):
            raise ValueError(f"kind must be 'spout' or 'bolt', not {kind!r}")
        self._is_bolt = kind == "bolt"
        self._collector = collector
        self._logger = logger
        handlers = {"emit": self._emit, "log": self._log, "error": self._error,
                    "metrics": self._metrics}
        if self._is_bolt:
            handlers["ack"] = self._ack
            handlers["fail"] = self._fail
        self._handlers = handlers

    def dispatch(self, message: dict[str, Any]) -> list[int] | None:
        """Apply ``message``; return task ids the subprocess is waiting for, if any."""
        command: Any = message.get("command")  # the subprocess's, checked below
        handler = self._handlers.get(command)
        if handler is not None:
            return handler(message)
        if command is None:
            raise ShellProtocolError(
                f"command not found in message from the subprocess: {message!r}")
        if self._is_bolt:
            self._logger.warning("ignoring unknown multi-lang command %r from the subprocess: %r",
                                 command, message)
            return None
        raise ShellProtocolError(f"Unknown command received: {command!r} (in {message!r})")

    def _emit(self, message: dict[str, Any]) -> list[int] | None:
        values = message.get("tuple")
        if not isinstance(values, list):
            raise ShellProtocolError(f"emit without a 'tuple' list: {message!r}")
        stream = message.get("stream")
        if stream is None:
            stream = DEFAULT_STREAM
        direct_task = message.get("task") or None
        need_task_ids = message.get("need_task_ids")
        need_task_ids = True if need_task_ids is None else bool(need_task_ids)
        if self._is_bolt:
            anchors = message.get("anchors")
            if anchors is None:
                anchors = []
            elif not isinstance(anchors, list):
                anchors = [anchors]
            task_ids = self._collector.emit(values, stream, anchors, direct_task, need_task_ids,
                                            None)
        else:
            task_ids = self._collector.emit(values, stream, None, direct_task, need_task_ids,
                                            message.get("id"))
        if need_task_ids and direct_task is None:
            return list(task_ids or ())
        return None

    def _ack(self, message: dict[str, Any]) -> None:
        self._collector.ack(message.get("id"))

    def _fail(self, message: dict[str, Any]) -> None:
        self._collector.fail(message.get("id"))

    def _log(self, message: dict[str, Any]) -> None:
        level: Any = message.get("level")  # the subprocess's, checked here
        if isinstance(level, bool) or level not in _STORM_LOG_LEVELS:
            level = STORM_LOG_INFO
        self._collector.log(str(message.get("msg")), level)

    def _error(self, message: dict[str, Any]) -> None:
        self._collector.error(str(message.get("msg")))

    def _metrics(self, message: dict[str, Any]) -> None:
        name = message.get("name")
        if not name or not isinstance(name, str):
            raise ShellProtocolError(f"metrics message without a metric name: {message!r}")
        self._collector.metric(name, message.get("params"))
