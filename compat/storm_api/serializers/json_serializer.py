"""Storm's default multi-lang framing: a JSON document, then a line ``end``."""
from __future__ import annotations

import io
import logging
import threading
from typing import IO, Any

import simplejson as json

from ..exceptions import StormWentAwayError
from .serializer import Serializer

log = logging.getLogger(__name__)


class _BorrowedTextStream(io.TextIOWrapper):
    """A text layer over a stream someone else owns.

    A plain TextIOWrapper closes its buffer when it is garbage-collected, so
    a discarded component would close the process's stdout (or a test
    runner's capture file).  This one only flushes and lets go.
    """

    def __del__(self) -> None:
        try:
            if not self.closed:
                self.flush()
                self.detach()
        except Exception:
            pass


class JSONSerializer(Serializer):
    """JSON with ``end`` framing, as Storm's ``JsonSerializer`` speaks it.

    simplejson is used (as pystorm does) so values serialize identically,
    e.g. ``Decimal`` is accepted and namedtuples become arrays.
    """

    def __init__(self, input_stream: IO[Any], output_stream: IO[Any], reader_lock: threading.RLock,
                 writer_lock: threading.RLock) -> None:
        super().__init__(input_stream, output_stream, reader_lock, writer_lock)
        self.input_stream = self._wrap_stream(input_stream)
        self.output_stream = self._wrap_stream(output_stream)

    @staticmethod
    def _wrap_stream(stream: Any) -> IO[str]:
        """Give the stream UTF-8 text semantics whatever the locale says."""
        if hasattr(stream, "buffer"):
            return _BorrowedTextStream(stream.buffer, encoding="utf-8")
        if hasattr(stream, "readable"):
            return _BorrowedTextStream(stream, encoding="utf-8")
        text: IO[str] = open(stream.fileno(), mode=stream.mode, encoding="utf-8", closefd=False)
        return text

    def read_message(self) -> Any:
        """Read lines up to ``end``; blank lines are noise Storm may send."""
        msg = ""
        num_blank_lines = 0
        while True:
            with self._reader_lock:
                line = self.input_stream.readline()
            if line == "end\n":
                break
            if line == "":
                raise StormWentAwayError()
            if line == "\n":
                num_blank_lines += 1
                if num_blank_lines % 1000 == 0:
                    log.warning(
                        "While trying to read a command or pending task ID, Storm has instead sent "
                        "%s '\\n' messages.",
                        num_blank_lines,
                    )
                continue
            msg = f"{msg}{line[0:-1]}\n"
        try:
            return json.loads(msg)
        except Exception:
            log.error("JSON decode error for message: %r", msg, exc_info=True)
            raise

    def serialize_dict(self, msg_dict: dict[str, Any]) -> str:
        return json.dumps(msg_dict, namedtuple_as_object=False) + "\nend\n"
