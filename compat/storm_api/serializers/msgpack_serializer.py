"""msgpack framing: one msgpack object per message, no ``end`` lines.

Storm ships no Java counterpart; a custom ``topology.multilang.serializer``
is needed on the Storm side, and our own shell bridge can speak it.
"""
from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from typing import IO, Any

import msgpack

from ..exceptions import StormWentAwayError
from .serializer import Serializer


class MsgpackSerializer(Serializer):
    """Stream of msgpack objects; the unpacker finds message boundaries."""

    CHUNK_SIZE = 1024 ** 2

    def __init__(self, input_stream: IO[Any], output_stream: IO[Any], reader_lock: threading.RLock,
                 writer_lock: threading.RLock) -> None:
        super().__init__(input_stream, self._raw_stream(output_stream), reader_lock, writer_lock)
        self._messages = self._messages_generator()

    @staticmethod
    def _raw_stream(stream: Any) -> IO[bytes]:
        """Bytes must go to the binary layer under a text stream."""
        raw: IO[bytes] = stream.buffer if hasattr(stream, "buffer") else stream
        return raw

    def _messages_generator(self) -> Iterator[Any]:
        unpacker = msgpack.Unpacker()
        while True:
            # os.read returns whatever is available instead of blocking for a
            # full chunk as a buffered read on stdin would.
            with self._reader_lock:
                try:
                    chunk = os.read(self.input_stream.fileno(), self.CHUNK_SIZE)
                except io.UnsupportedOperation:
                    chunk = self.input_stream.read(self.CHUNK_SIZE)
            if not chunk:
                raise StormWentAwayError()
            unpacker.feed(chunk)
            yield from unpacker

    def read_message(self) -> Any:
        return next(self._messages)

    def serialize_dict(self, msg_dict: dict[str, Any]) -> bytes:
        packed: bytes = msgpack.packb(msg_dict)  # msgpack ships no types
        return packed
