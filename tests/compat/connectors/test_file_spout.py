"""FileSpout: every line once, in order, and a restore goes on from exactly the next one."""

from __future__ import annotations

import pytest

from compat.connectors import ConnectorConfigError, FileSpout
from compat.storm_api.exceptions import ComponentFailure
from compat.storm_api.state import HashMapState
from compat.storm_api.testing import SpoutHarness
from tests.compat.connectors.helpers import checkpoint, with_state

PATH = "heron.connectors.file.path"


def write_inputs(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("a1\na2\na3\n")
    (tmp_path / "in" / "b.txt").write_bytes("b1\r\nb2 é\r\n\nb4".encode())  # CRLF, no final \n
    (tmp_path / "in" / "c.txt").write_text("")
    (tmp_path / "in" / "d.txt").write_text("d1\n")
    return ["a1", "a2", "a3", "b1", "b2 é", "", "b4", "d1"]


def spout(conf, state=None, **kwargs):
    cls = FileSpout if state is None else with_state(FileSpout, state)
    return SpoutHarness(cls, conf=conf, **kwargs)


def test_reads_every_line_of_the_globbed_files_in_order_then_is_exhausted(tmp_path):
    expected = write_inputs(tmp_path)
    with spout({PATH: str(tmp_path / "in" / "*.txt"), "heron.connectors.file.batch.lines": 3}) as s:
        assert not s.is_exhausted()
        emits = s.drain()
        assert [e.values for e in emits] == [[line] for line in expected]
        assert s.is_exhausted()
        assert s.next_tuple(3) == []


@pytest.mark.parametrize("batch", [1, 2, 5])
def test_a_restore_from_any_checkpoint_goes_on_from_exactly_the_next_line(tmp_path, batch):
    expected = write_inputs(tmp_path)
    conf = {PATH: [str(tmp_path / "in" / "a.txt"), str(tmp_path / "in" / "[bcd].txt")],
            "heron.connectors.file.batch.lines": batch}
    calls = 0
    while True:
        # run `calls` next_tuple calls, checkpoint, then "crash" and restore from it
        with spout(conf) as first:
            before = first.next_tuple(calls)
            saved = checkpoint(first.component, "ckpt-1")
            first.next_tuple(2)  # emitted after the checkpoint: lost with the crash
        with spout(conf, saved) as restored:
            after = restored.drain()
        assert [e.values[0] for e in before + after] == expected, calls
        if not after:
            break
        calls += 1


def test_a_restore_after_the_end_emits_nothing(tmp_path):
    write_inputs(tmp_path)
    conf = {PATH: str(tmp_path / "in" / "*.txt")}
    with spout(conf) as first:
        first.drain()
        saved = checkpoint(first.component, "ckpt-3")
    with spout(conf, saved) as restored:
        assert restored.is_exhausted()
        assert restored.next_tuple(2) == []


def test_the_position_is_file_and_byte_offset_in_state(tmp_path):
    write_inputs(tmp_path)
    state = HashMapState()
    with spout({PATH: str(tmp_path / "in" / "a.txt"), "heron.connectors.file.batch.lines": 2},
               state) as s:
        s.next_tuple()
        assert state[FileSpout.POSITION_KEY] == {"file": str(tmp_path / "in" / "a.txt"),
                                                 "offset": 6}


def test_parallel_tasks_share_the_files_out_and_read_each_line_once(tmp_path):
    expected = write_inputs(tmp_path)
    context = {"task->component": {"1": "lines", "2": "lines", "-1": "__system"},
               "streams": ["default"], "stream->outputfields": {"default": ["line"]}}
    got = []
    for task in (1, 2):
        with SpoutHarness(FileSpout, conf={PATH: str(tmp_path / "in" / "*")},
                          context={**context, "taskid": task, "componentid": "lines"},
                          component_name="lines", task_id=task) as s:
            got.extend(e.values[0] for e in s.drain())
    assert sorted(got) == sorted(expected)


def test_the_class_config_is_a_default_that_the_components_conf_overrides(tmp_path):
    write_inputs(tmp_path)

    class Lines(FileSpout):
        config = {PATH: str(tmp_path / "in" / "a.txt")}

    with SpoutHarness(Lines) as s:
        assert [e.values[0] for e in s.drain()] == ["a1", "a2", "a3"]
    with SpoutHarness(Lines, conf={PATH: str(tmp_path / "in" / "d.txt")}) as s:
        assert [e.values[0] for e in s.drain()] == ["d1"]


@pytest.mark.parametrize("conf, message", [
    ({}, "config key 'heron.connectors.file.path' is required and not set"),
    ({PATH: 3}, "'heron.connectors.file.path' must be a string or a non-empty list"),
    ({PATH: "{tmp}/nothing-*.txt"}, "'heron.connectors.file.path': the glob"),
    ({PATH: "{tmp}/missing.txt"}, "is not a file"),
    ({PATH: "{tmp}/in/a.txt", "heron.connectors.file.batch.lines": 0},
     "'heron.connectors.file.batch.lines' must be at least 1"),
    ({PATH: "{tmp}/in/a.txt", "heron.connectors.file.encoding": "nope"},
     "'heron.connectors.file.encoding' names an unknown encoding"),
])
def test_malformed_config_fails_at_start_naming_the_key(tmp_path, conf, message):
    write_inputs(tmp_path)
    conf = {k: v.replace("{tmp}", str(tmp_path)) if isinstance(v, str) else v
            for k, v in conf.items()}
    with pytest.raises(ComponentFailure) as failure:
        SpoutHarness(FileSpout, conf=conf)
    assert isinstance(failure.value.__cause__, ConnectorConfigError)
    assert message in str(failure.value.__cause__)


def test_a_line_that_does_not_decode_fails_naming_file_and_offset(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\xfe\n")
    with spout({PATH: str(tmp_path / "bad.txt")}) as s:
        with pytest.raises(ComponentFailure) as failure:
            s.next_tuple()
    assert "bad.txt: the line at byte 3 is not utf-8" in str(failure.value.__cause__)
