"""Common write path of the multi-lang serializers."""
from __future__ import annotations

import logging
import threading
from typing import IO, Any

from ..exceptions import StormWentAwayError

log = logging.getLogger(__name__)


class Serializer:
    """Reads and writes whole protocol messages on a component's streams.

    Locks are passed in, not owned, because the component also takes them to
    keep an emit and the task-id reply that answers it together.
    """

    def __init__(self, input_stream: IO[Any], output_stream: IO[Any], reader_lock: threading.RLock,
                 writer_lock: threading.RLock) -> None:
        self._reader_lock = reader_lock
        self._writer_lock = writer_lock
        self.input_stream = input_stream
        self.output_stream = output_stream

    def read_message(self) -> Any:
        """Return the next message; raise ``StormWentAwayError`` on EOF."""
        raise NotImplementedError

    def serialize_dict(self, msg_dict: dict[str, Any]) -> Any:
        """Encode one message for ``output_stream``."""
        raise NotImplementedError

    def send_message(self, msg_dict: dict[str, Any]) -> None:
        """Write one message and flush it.

        Flushing before and after keeps anything else written to the stream
        from interleaving with the message.  An I/O error means Storm is gone;
        any other failure (e.g. an unserializable value) is logged and the
        message dropped, which is what pystorm does.
        """
        with self._writer_lock:
            try:
                self.output_stream.flush()
                self.output_stream.write(self.serialize_dict(msg_dict))
                self.output_stream.flush()
            except OSError:
                raise StormWentAwayError() from None
            except Exception:
                log.exception("Failed to send message: %r", msg_dict)
