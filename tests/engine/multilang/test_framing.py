"""JSON/``end`` framing as Storm's JsonSerializer speaks it, and pystorm's msgpack."""
from __future__ import annotations

import io
from collections import namedtuple

import msgpack
import pytest

from engine.common.multilang.errors import PipeClosed, ShellProtocolError
from engine.common.multilang.framing import JsonFraming, MsgpackFraming, framing_for


class TrickleStream(io.BytesIO):
    """Returns at most ``step`` bytes per read1, as a pipe may."""

    def __init__(self, data: bytes, step: int) -> None:
        super().__init__(data)
        self.step = step

    def read1(self, n: int = -1) -> bytes:
        return super().read1(min(self.step, n if n > 0 else self.step))


def test_json_message_is_followed_by_an_end_line():
    assert (
        JsonFraming().encode({"command": "next", "id": ""}) == b'{"command":"next","id":""}\nend\n'
    )


def test_json_task_ids_are_a_bare_array():
    assert JsonFraming().encode([1, 2]) == b"[1,2]\nend\n"


def test_json_encodes_namedtuple_values_as_arrays_and_keeps_utf8():
    Word = namedtuple("Word", "word count")
    data = JsonFraming().encode({"tuple": Word("héllo", 2)})
    assert data == '{"tuple":["héllo",2]}\nend\n'.encode()


def test_json_refuses_values_it_cannot_carry():
    with pytest.raises(TypeError):
        JsonFraming().encode({"tuple": [object()]})


def test_json_reader_tolerates_blank_lines_and_multiline_documents():
    stream = io.BytesIO(b'\n\n{"command":\n "sync"}\n\nend\n{"pid": 4}\r\nend\r\n')
    reader = JsonFraming().reader(stream)
    assert reader.read() == {"command": "sync"}
    assert reader.read() == {"pid": 4}


def test_json_reader_raises_pipe_closed_at_eof_with_the_partial_message():
    reader = JsonFraming().reader(io.BytesIO(b'{"command": "emit",\n'))
    with pytest.raises(PipeClosed) as err:
        reader.read()
    assert b'"emit"' in err.value.partial
    assert "Pipe to subprocess seems to be broken" in str(err.value)


def test_json_reader_blames_print_for_non_json_output():
    reader = JsonFraming().reader(io.BytesIO(b"debugging: got here\nend\n"))
    with pytest.raises(ShellProtocolError, match="print"):
        reader.read()


def test_json_reader_rejects_an_empty_message():
    with pytest.raises(ShellProtocolError, match="empty message"):
        JsonFraming().reader(io.BytesIO(b"\nend\n")).read()


def test_msgpack_messages_have_no_framing():
    assert MsgpackFraming().encode({"command": "sync"}) == msgpack.packb({"command": "sync"})


def test_msgpack_reader_reassembles_messages_split_across_reads():
    messages = [{"command": "emit", "tuple": ["x" * 50, i]} for i in range(5)]
    data = b"".join(msgpack.packb(m) for m in messages)
    reader = MsgpackFraming().reader(TrickleStream(data, step=7))
    assert [reader.read() for _ in messages] == messages
    with pytest.raises(PipeClosed):
        reader.read()


def test_msgpack_reader_reports_garbage_as_a_protocol_error():
    with pytest.raises(ShellProtocolError):
        MsgpackFraming().reader(io.BytesIO(b"\xc1\xc1\xc1")).read()


def test_framing_for_names_the_known_serializers():
    assert framing_for("json").name == "json"
    assert framing_for("msgpack").name == "msgpack"
    with pytest.raises(ValueError, match="msgpack"):
        framing_for("pickle")
