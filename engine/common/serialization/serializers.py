"""Pluggable serializers for tuple values.

msgpack is the safe default: it cannot execute code when decoding, so it may be
accepted from any peer. pickle is only used when a topology asks for it explicitly
(``topology.tuple.serializer: pickle``) because decoding pickle runs arbitrary code.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import msgpack

from engine.common.codec import tuple_codec
from engine.config.execution import serializer_name
from engine.config.keys import SERIALIZER_KEY


class SerializationError(Exception):
    """A tuple's values could not be serialized; the message names where it came from."""

    def __init__(self, message: str, *, component: str | None = None,
                 stream: str | None = None, values: Any = None) -> None:
        where = []
        if component is not None:
            where.append(f"component {component!r}")
        if stream is not None:
            where.append(f"stream {stream!r}")
        prefix = f"{' '.join(where)}: " if where else ""
        super().__init__(prefix + message)
        self.component = component
        self.stream = stream
        self.values = values


class TupleSerializer(Protocol):
    """Turns a tuple's values into bytes and back."""

    name: str

    def dumps(self, values: Sequence[Any]) -> bytes: ...

    def loads(self, data: bytes) -> list[Any]: ...

    def loads_many(self, blobs: Sequence[bytes]) -> list[Any]:
        """Every blob's values, in order; raises if any blob does not decode."""
        ...


class MsgpackSerializer:
    """msgpack with binary/str separation kept, so bytes stay bytes and str stays str."""

    name = "msgpack"

    def __init__(self) -> None:
        self._packer = msgpack.Packer(use_bin_type=True, autoreset=True)
        # the tuple path's packer: the same bytes and errors as self._packer.pack,
        # compiled when the extension is built (engine.common.codec)
        self.dumps = tuple_codec.pack_row  # type: ignore[method-assign]

    def dumps(self, values: Sequence[Any]) -> bytes:  # pragma: no cover - replaced per instance
        return self._packer.pack(values)

    @staticmethod
    def loads(data: bytes) -> list[Any]:
        return msgpack.unpackb(data, raw=False, strict_map_key=False, use_list=True)

    @staticmethod
    def loads_many(blobs: Sequence[bytes]) -> list[Any]:
        """A batch's blobs in one pass of the C unpacker (about half the cost of one
        ``loads`` per blob). Concatenated msgpack objects are a msgpack stream; the
        stream must hold exactly one object per blob and nothing else, so a truncated or
        padded blob shifts the count or fails to parse, and the caller falls back to
        decoding blob by blob to drop only the bad ones."""
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, use_list=True,
                                    max_buffer_size=0)
        unpacker.feed(b"".join(blobs))
        out = list(unpacker)
        if len(out) != len(blobs) or unpacker.tell() != sum(map(len, blobs)):
            raise ValueError(f"{len(blobs)} blobs decoded as {len(out)} values")
        return out


class PickleSerializer:
    """Python pickle: any picklable value survives, but only for trusted, local peers."""

    name = "pickle"

    @staticmethod
    def dumps(values: Sequence[Any]) -> bytes:
        return pickle.dumps(list(values), protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def loads(data: bytes) -> list[Any]:
        return pickle.loads(data)

    @staticmethod
    def loads_many(blobs: Sequence[bytes]) -> list[Any]:
        return [pickle.loads(blob) for blob in blobs]


_SERIALIZERS: dict[str, Callable[[], TupleSerializer]] = {"msgpack": MsgpackSerializer,
                                                          "pickle": PickleSerializer}


def serializer_for_config(conf: Mapping[str, Any]) -> TupleSerializer:
    """The serializer a topology's configuration asks for (msgpack unless told otherwise)."""
    name = serializer_name(conf)
    try:
        return _SERIALIZERS[name]()
    except KeyError:
        raise SerializationError(
            f"unknown tuple serializer {name!r} in {SERIALIZER_KEY}; "
            f"choose one of {', '.join(sorted(_SERIALIZERS))}") from None
