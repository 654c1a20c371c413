"""Frames ``[protobuf full type name, serialized message]`` and the registry of types a
process accepts.

The receiver dispatches on the type frame, as Heron's packets carry the type name; an
unknown type or bytes that do not parse raise :class:`MalformedMessage`, which every
receive loop logs with the sender and drops, so a bad peer cannot kill a process.
"""

from __future__ import annotations

from typing import Any

from engine.messages import (
    ckptmgr_pb2,
    metrics_pb2,
    physical_plan_pb2,
    scheduler_pb2,
    shell_pb2,
    stmgr_pb2,
    tmanager_pb2,
    tuple_pb2,
)

_MODULES = (ckptmgr_pb2, metrics_pb2, physical_plan_pb2, scheduler_pb2, shell_pb2, stmgr_pb2,
            tmanager_pb2, tuple_pb2)

#: type frame -> message class, for every top-level message of the wire protos
TYPES: dict[bytes, Any] = {}
for _module in _MODULES:
    for _name in _module.DESCRIPTOR.message_types_by_name:
        _cls = getattr(_module, _name)
        TYPES[_cls.DESCRIPTOR.full_name.encode()] = _cls


class MalformedMessage(Exception):
    """A frame set that is not a known message; the text says what was wrong."""


def type_frame(cls: Any) -> bytes:
    """The type frame of a message class (precompute it on hot paths)."""
    return cls.DESCRIPTOR.full_name.encode()


def encode(message: Any) -> list[bytes]:
    return [message.DESCRIPTOR.full_name.encode(), message.SerializeToString()]


def decode(frames: list[bytes]) -> Any:
    """The message carried by ``[type, payload]``; MalformedMessage when it is not one."""
    if len(frames) != 2:
        raise MalformedMessage(f"expected 2 frames [type, payload], got {len(frames)}")
    kind, payload = frames
    cls = TYPES.get(bytes(kind))
    if cls is None:
        shown = bytes(kind)[:60]
        raise MalformedMessage(f"unknown message type {shown!r}")
    message = cls()
    try:
        message.ParseFromString(payload)
    except Exception as exc:
        raise MalformedMessage(
            f"{cls.DESCRIPTOR.full_name}: payload does not parse: {exc}") from None
    return message
