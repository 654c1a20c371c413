"""Multi-lang framing: what our serializers read and write."""
from __future__ import annotations

import io
import logging
import threading

import msgpack
import pytest

from compat.storm_api.exceptions import StormWentAwayError
from compat.storm_api.serializers import SERIALIZERS, JSONSerializer, MsgpackSerializer


def make(cls, data: bytes = b"", output=None):
    return cls(io.BytesIO(data), output if output is not None else io.BytesIO(), threading.RLock(),
               threading.RLock())


def test_serializer_names_are_pystorms():
    assert set(SERIALIZERS) == {"json", "msgpack"}


def test_json_reads_multiline_messages_and_skips_blank_lines():
    serializer = make(JSONSerializer, b'\n\n{"a":\n 1}\nend\n\n[1, 2]\nend\n')
    assert serializer.read_message() == {"a": 1}
    assert serializer.read_message() == [1, 2]


def test_json_eof_raises_storm_went_away():
    serializer = make(JSONSerializer, b'{"a": 1}\nend\n{"b"')
    serializer.read_message()
    with pytest.raises(StormWentAwayError, match="Got EOF while reading from Storm"):
        serializer.read_message()


def test_json_warns_every_thousand_blank_lines(caplog):
    serializer = make(JSONSerializer, b"\n" * 2000 + b"{}\nend\n")
    with caplog.at_level(logging.WARNING):
        assert serializer.read_message() == {}
    assert sum("2000 '\\n' messages" in r.getMessage() or "1000 '\\n' messages" in r.getMessage()
               for r in caplog.records) == 2


def test_json_decode_error_is_logged_and_raised(caplog):
    serializer = make(JSONSerializer, b"{nope\nend\n")
    with pytest.raises(ValueError):
        serializer.read_message()
    assert "JSON decode error" in caplog.text


def test_json_writes_end_framing_and_namedtuples_as_arrays():
    from collections import namedtuple

    out = io.BytesIO()
    serializer = make(JSONSerializer, output=out)
    serializer.send_message({"command": "emit", "tuple": namedtuple("T", "a b")(1, "é")})
    assert out.getvalue() == b'{"command": "emit", "tuple": [1, "\\u00e9"]}\nend\n'


def test_unserializable_message_is_logged_and_dropped(caplog):
    out = io.BytesIO()
    serializer = make(JSONSerializer, output=out)
    serializer.send_message({"tuple": [object()]})
    assert out.getvalue() == b""
    assert "Failed to send message" in caplog.text


class BrokenPipe(io.BytesIO):
    def write(self, data):
        raise BrokenPipeError()


@pytest.mark.parametrize("cls", [JSONSerializer, MsgpackSerializer])
def test_io_error_on_write_means_storm_went_away(cls):
    serializer = make(cls, output=BrokenPipe())
    with pytest.raises(StormWentAwayError):
        serializer.send_message({"command": "sync"})


def test_msgpack_reads_messages_split_across_chunks(monkeypatch):
    data = msgpack.packb({"command": "next"}) + msgpack.packb([3, 4])
    serializer = make(MsgpackSerializer, data)
    monkeypatch.setattr(MsgpackSerializer, "CHUNK_SIZE", 3)
    assert serializer.read_message() == {"command": "next"}
    assert serializer.read_message() == [3, 4]
    with pytest.raises(StormWentAwayError):
        serializer.read_message()


def test_msgpack_writes_bare_objects_to_the_binary_layer():
    text_out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    serializer = make(MsgpackSerializer, output=text_out)
    serializer.send_message({"command": "sync"})
    assert text_out.buffer.getvalue() == msgpack.packb({"command": "sync"})


def test_msgpack_reads_with_os_read_when_the_stream_has_a_descriptor(tmp_path):
    path = tmp_path / "in"
    path.write_bytes(msgpack.packb({"command": "next"}))
    with open(path, "rb") as stream:
        serializer = MsgpackSerializer(stream, io.BytesIO(), threading.RLock(), threading.RLock())
        assert serializer.read_message() == {"command": "next"}


def test_discarding_a_json_serializer_leaves_the_callers_streams_open():
    import gc

    inp, out = io.BytesIO(b"{}\nend\n"), io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    serializer = make(JSONSerializer, output=out)
    serializer.input_stream = JSONSerializer._wrap_stream(inp)
    serializer.send_message({"command": "sync"})
    del serializer
    gc.collect()
    assert not inp.closed and not out.buffer.closed
    assert out.buffer.getvalue() == b'{"command": "sync"}\nend\n'
