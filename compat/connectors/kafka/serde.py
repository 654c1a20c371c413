"""Keys and values to and from bytes: ``string`` (UTF-8), ``bytes`` and ``json``.

Storm's Java (de)serializer classes map here: ``StringDeserializer`` is ``string``,
``ByteArrayDeserializer`` is ``bytes`` (the Flux reader does the mapping). A record that
does not decode raises :class:`DecodeError`; the spout counts and skips it rather than
failing the task (a poison record would otherwise crash-loop it).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["DecodeError", "deserializer", "serializer"]


class DecodeError(ValueError):
    """A record's key or value could not be decoded with the configured deserializer."""


def _decode_string(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None


def _decode_json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise DecodeError(f"not JSON ({exc})") from None


_DECODERS: dict[str, Callable[[bytes], Any]] = {
    "string": _decode_string, "bytes": bytes, "json": _decode_json}


def deserializer(kind: str) -> Callable[[bytes | None], Any]:
    """``decode(data)`` for ``kind``; None (a null key or a tombstone) stays None."""
    decode = _DECODERS[kind]

    def run(data: bytes | None) -> Any:
        return None if data is None else decode(data)
    return run


def _encode_string(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    return (value if isinstance(value, str) else str(value)).encode("utf-8")


def _encode_bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"the bytes serializer takes bytes or str, not {type(value).__name__}")


def _encode_json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


_ENCODERS: dict[str, Callable[[Any], bytes]] = {
    "string": _encode_string, "bytes": _encode_bytes, "json": _encode_json}


def serializer(kind: str) -> Callable[[Any], bytes | None]:
    """``encode(value)`` for ``kind``; None stays None (a null key, or a tombstone)."""
    encode = _ENCODERS[kind]

    def run(value: Any) -> bytes | None:
        return None if value is None else encode(value)
    return run
