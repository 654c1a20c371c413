"""The output seam between a component and whatever carries its outputs.

A component never writes protocol messages itself: every emit, ack, fail,
log, error, metric and sync goes to ``component._collector``.  Under
multi-lang that is a :class:`ProtocolCollector`, which builds exactly the
dicts pystorm builds and writes them with the component's serializer.
In-process engines install their own collector and skip the dict building.

:func:`dispatch_message` goes the other way: it turns a protocol dict into the
matching collector call.  Hosting uses it for pystorm classes (whose outputs
can only be observed as dicts) and our components use it when user code calls
``send_message`` while hosted in-process.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

__all__ = ["OutputCollector", "ProtocolCollector", "ProtocolEndpoint", "dispatch_message"]

# Storm's log level for a "log" command without a level (STORM-414: info).
_STORM_LOG_INFO = 2


@runtime_checkable
class OutputCollector(Protocol):
    """Where a component's outputs go.

    Multi-lang: ProtocolCollector writes Storm's protocol; in-process engines
    install their own.  ``anchors`` is a list of input ids for bolts (already
    converted from Tuples) and ``None`` for spouts; ``tup_id`` is for spouts
    only.  ``emit`` returns the target task ids only when ``need_task_ids`` is
    true and ``direct_task`` is None (otherwise the return value is ignored).
    A collector used by a TicklessBatchingBolt is called from its batcher
    thread too, so it must tolerate calls from a second thread.

    Two optional methods let an engine take a component's ``emit`` whole, its
    own work and the component's in one call: ``spout_emit`` (with
    ``Spout.emit``'s signature, checks and result) and ``bolt_emit_for(bolt)``
    (returning a callable with ``Bolt.emit``'s). A spout or bolt installs them
    as its ``emit`` when bound, and only when its class keeps the stock
    ``emit``.
    """

    def emit(
        self,
        values: list[Any] | tuple[Any, ...],
        stream: str | None,
        anchors: list[Any] | None,
        direct_task: int | None,
        need_task_ids: bool,
        tup_id: object | None,
    ) -> list[int] | None: ...

    def ack(self, tup_id: object) -> None: ...

    def fail(self, tup_id: object) -> None: ...

    def log(self, msg: str, level: int) -> None: ...

    def error(self, msg: str) -> None: ...

    def metric(self, name: str, value: object) -> None: ...

    def sync(self) -> None: ...


class ProtocolEndpoint(Protocol):
    """The side of a component a :class:`ProtocolCollector` writes through (a
    ``Component``): its message writer, its task-id reader and the two locks that keep an
    emit and its reply together."""

    # read-only here, so any lock type will do (a Component's are RLocks)
    @property
    def _reader_lock(self) -> AbstractContextManager[Any]: ...

    @property
    def _writer_lock(self) -> AbstractContextManager[Any]: ...

    def send_message(self, message: dict[str, Any]) -> None: ...

    def read_task_ids(self) -> list[int]: ...


class ProtocolCollector:
    """Speaks Storm's multi-lang protocol on behalf of one component.

    Messages go through ``component.send_message`` (as pystorm's do, so a
    subclass overriding it still sees every message) and task-id replies are
    read with ``component.read_task_ids`` under both of the component's locks,
    so an emit and its reply cannot be split by another thread.
    """

    __slots__ = ("_component",)

    def __init__(self, component: ProtocolEndpoint) -> None:
        self._component = component

    def emit(
        self,
        values: list[Any] | tuple[Any, ...],
        stream: str | None,
        anchors: list[Any] | None,
        direct_task: int | None,
        need_task_ids: bool,
        tup_id: object | None,
    ) -> list[int] | None:
        # Key order and omissions are pystorm's, so the JSON is byte-identical.
        msg: dict[str, Any] = {"command": "emit", "tuple": values}
        if anchors is not None:
            msg["anchors"] = anchors
        if tup_id is not None:
            msg["id"] = tup_id
        if stream is not None:
            msg["stream"] = stream
        if direct_task is not None:
            msg["task"] = direct_task
        if not need_task_ids:
            # Storm defaults need_task_ids to true, so only false is sent.
            msg["need_task_ids"] = False
        component = self._component
        if need_task_ids and direct_task is None:
            with component._reader_lock, component._writer_lock:
                component.send_message(msg)
                return component.read_task_ids()
        component.send_message(msg)
        return None

    def ack(self, tup_id: object) -> None:
        self._component.send_message({"command": "ack", "id": tup_id})

    def fail(self, tup_id: object) -> None:
        self._component.send_message({"command": "fail", "id": tup_id})

    def log(self, msg: str, level: int) -> None:
        self._component.send_message({"command": "log", "msg": msg, "level": level})

    def error(self, msg: str) -> None:
        self._component.send_message({"command": "error", "msg": msg})

    def metric(self, name: str, value: object) -> None:
        self._component.send_message({"command": "metrics", "name": name, "params": value})

    def sync(self) -> None:
        self._component.send_message({"command": "sync"})


def dispatch_message(collector: OutputCollector, message: dict[str, Any]) -> list[int] | None:
    """Deliver one protocol dict as the equivalent collector call.

    Returns the collector's task ids for an emit that asks for them (Storm
    treats an absent ``need_task_ids`` as true) and is not direct; the caller
    queues them where ``read_task_ids`` will find them.  Commands Storm
    would not understand raise ``ValueError``: on the wire they would kill
    the worker or be lost.
    """
    command = message.get("command")
    if command == "emit":
        anchors = message.get("anchors")
        if anchors is not None and not isinstance(anchors, list):
            anchors = [anchors]  # Storm accepts a single id as well as a list.
        direct_task = message.get("task")
        need_task_ids = bool(message.get("need_task_ids", True))
        task_ids = collector.emit(message["tuple"], message.get("stream"), anchors, direct_task,
                                  need_task_ids, message.get("id"))
        return task_ids if need_task_ids and direct_task is None else None
    if command == "ack":
        collector.ack(message["id"])
    elif command == "fail":
        collector.fail(message["id"])
    elif command == "log":
        collector.log(message["msg"], message.get("level", _STORM_LOG_INFO))
    elif command == "error":
        collector.error(message["msg"])
    elif command == "metrics":
        collector.metric(message["name"], message["params"])
    elif command == "sync":
        collector.sync()
    else:
        raise ValueError(f"not a multi-lang command a component can send: {message!r}")
    return None
