"""Message framing on the pipes, as Storm's ISerializer implementations do it.

* ``json`` is Storm's ``JsonSerializer``: each message is one JSON document
  followed by a line ``end``.  Like Storm's reader we join every line up to
  ``end`` and parse the result, so blank lines are harmless whitespace; an
  ``end`` with nothing before it, or text that is not JSON (typically a
  ``print()`` in user code writing to stdout), is a protocol error.
* ``msgpack`` is what pystorm's ``MsgpackSerializer`` speaks: one msgpack
  object per message, no framing at all (Storm ships no Java counterpart).

Readers take the subprocess's stdout as a buffered binary stream and raise
:class:`PipeClosed` at EOF, carrying any half-read message so the failure
report can show it.
"""
from __future__ import annotations

import json
from typing import IO, Any, Protocol

import msgpack

from .errors import PipeClosed, ShellProtocolError

__all__ = ["Framing", "MessageReader", "JsonFraming", "MsgpackFraming", "framing_for", "FRAMINGS"]


class MessageReader(Protocol):
    def read(self) -> Any:
        """Block for the next whole message; raise ``PipeClosed`` at EOF."""


class Framing(Protocol):
    name: str

    def encode(self, message: Any) -> bytes:
        """The bytes to write for one message (a dict, or a task-id list)."""

    def reader(self, stream: IO[bytes]) -> MessageReader:
        """A reader decoding messages from ``stream``."""


class JsonFraming:
    """Storm's default ``org.apache.storm.multilang.JsonSerializer``."""

    name = "json"

    def encode(self, message: Any) -> bytes:
        # Compact and UTF-8 as json-smart writes it; tuples (namedtuples
        # included) become arrays.  No ``default=``: a value JSON cannot carry
        # must fail loudly here rather than reach the component mangled.
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        return text.encode("utf-8") + b"\nend\n"

    def reader(self, stream: IO[bytes]) -> JsonReader:
        return JsonReader(stream)


class JsonReader:
    """Lines up to ``end``, parsed as one JSON document."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._readline = stream.readline

    def read(self) -> Any:
        lines: list[bytes] = []
        while True:
            line = self._readline()
            if not line:
                raise PipeClosed(partial=b"".join(lines))
            if line.rstrip(b"\r\n") == b"end":
                break
            lines.append(line)
        data = b"".join(lines)
        if not data.strip():
            raise ShellProtocolError(
                "empty message from the subprocess (an 'end' line with nothing before it)")
        try:
            return json.loads(data.decode("utf-8"))
        except ValueError as exc:
            raise ShellProtocolError(
                f"the subprocess wrote something that is not a JSON message ({exc}): "
                f"{data[:300]!r}; "
                "stdout is reserved for the multi-lang protocol, so a print() in the component "
                "corrupts it (log instead)") from None


class MsgpackFraming:
    """pystorm's ``MsgpackSerializer``: a bare stream of msgpack objects."""

    name = "msgpack"
    CHUNK_SIZE = 1024 ** 2

    def encode(self, message: Any) -> bytes:
        return msgpack.packb(message)

    def reader(self, stream: IO[bytes]) -> MsgpackReader:
        return MsgpackReader(stream, self.CHUNK_SIZE)


class MsgpackReader:
    """Feeds whatever the pipe has into an unpacker, which finds the boundaries."""

    def __init__(self, stream: IO[bytes], chunk_size: int) -> None:
        # read1 returns what is available instead of waiting for a full chunk.
        self._read = getattr(stream, "read1", stream.read)
        self._chunk_size = chunk_size
        self._unpacker = msgpack.Unpacker(raw=False)

    def read(self) -> Any:
        while True:
            try:
                message = next(self._unpacker)
            except StopIteration:
                pass
            except (ValueError, msgpack.UnpackException) as exc:
                raise ShellProtocolError(
                    f"the subprocess wrote invalid msgpack data: {exc}") from None
            else:
                return message
            chunk = self._read(self._chunk_size)
            if not chunk:
                raise PipeClosed()
            self._unpacker.feed(chunk)


FRAMINGS: dict[str, type] = {"json": JsonFraming, "msgpack": MsgpackFraming}


def framing_for(serializer: str) -> Framing:
    """The framing named like the ``-s`` option of ``streamparse_run``."""
    try:
        return FRAMINGS[serializer]()
    except KeyError:
        raise ValueError(f"unknown multi-lang serializer {serializer!r}; expected one of "
                         f"{sorted(FRAMINGS)}") from None
