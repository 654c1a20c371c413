"""Messages from a subprocess become collector calls with Storm's defaults."""
from __future__ import annotations

import logging

import pytest

from engine.common.multilang.dispatch import MessageDispatcher
from engine.common.multilang.errors import ShellProtocolError


def dispatcher(kind: str, collector) -> MessageDispatcher:
    return MessageDispatcher(kind, collector, logging.getLogger("tests.multilang.dispatch"))


@pytest.fixture
def bolt(collector):
    return dispatcher("bolt", collector)


@pytest.fixture
def spout(collector):
    return dispatcher("spout", collector)


def test_emit_without_need_task_ids_flag_returns_task_ids_to_write_back(bolt, collector):
    assert bolt.dispatch({"command": "emit", "tuple": ["a"]}) == [7, 8]
    assert collector.emits() == [(["a"], "default", [], None, True, None)]


def test_emit_with_need_task_ids_false_gets_no_reply(bolt, collector):
    assert bolt.dispatch({"command": "emit", "tuple": ["a"], "need_task_ids": False}) is None
    assert collector.emits()[0][4] is False


def test_direct_emit_is_never_answered_even_when_task_ids_are_needed(spout, collector):
    assert (
        spout.dispatch({"command": "emit", "tuple": ["a"], "task": 5, "need_task_ids": True})
        is None
    )
    assert collector.emits() == [(["a"], "default", None, 5, True, None)]


def test_task_zero_means_not_direct(bolt, collector):
    assert bolt.dispatch({"command": "emit", "tuple": ["a"], "task": 0}) == [7, 8]
    assert collector.emits()[0][3] is None


def test_bolt_anchors_may_be_one_id_or_a_list(bolt, collector):
    bolt.dispatch({"command": "emit", "tuple": ["a"], "anchors": "-12", "need_task_ids": False})
    bolt.dispatch(
        {"command": "emit", "tuple": ["b"], "anchors": ["1", "2"], "need_task_ids": False}
    )
    assert [e[2] for e in collector.emits()] == [["-12"], ["1", "2"]]


def test_spout_emit_carries_its_message_id_and_stream(spout, collector):
    spout.dispatch(
        {"command": "emit", "tuple": [1], "id": "m1", "stream": "numbers", "need_task_ids": False}
    )
    assert collector.emits() == [([1], "numbers", None, None, False, "m1")]


def test_bolt_ack_and_fail_pass_the_input_id(bolt, collector):
    bolt.dispatch({"command": "ack", "id": "-5"})
    bolt.dispatch({"command": "fail", "id": "6"})
    assert collector.calls == [("ack", "-5"), ("fail", "6")]


@pytest.mark.parametrize(
    "message,level",
    [
        ({"msg": "x", "level": 4}, 4),
        ({"msg": "x"}, 2),
        ({"msg": "x", "level": "warn"}, 2),
        ({"msg": "x", "level": 9}, 2),
    ],
)
def test_log_keeps_storm_levels_and_defaults_to_info(bolt, collector, message, level):
    bolt.dispatch({"command": "log", **message})
    assert collector.logs() == [("x", level)]


def test_error_and_metrics_reach_the_collector(spout, collector):
    spout.dispatch({"command": "error", "msg": "trace"})
    spout.dispatch({"command": "metrics", "name": "seen", "params": 3})
    assert collector.calls == [("error", "trace"), ("metric", "seen", 3)]


def test_metrics_without_a_name_is_a_protocol_error(bolt):
    with pytest.raises(ShellProtocolError, match="metric name"):
        bolt.dispatch({"command": "metrics", "params": 1})


def test_spout_rejects_ack_as_storm_does(spout):
    with pytest.raises(ShellProtocolError, match="Unknown command received: 'ack'"):
        spout.dispatch({"command": "ack", "id": "x"})


def test_spout_rejects_unknown_commands_naming_them(spout):
    with pytest.raises(ShellProtocolError, match="'bogus'"):
        spout.dispatch({"command": "bogus"})


def test_bolt_ignores_unknown_commands_with_a_warning(bolt, collector, caplog):
    with caplog.at_level(logging.WARNING):
        assert bolt.dispatch({"command": "bogus"}) is None
    assert collector.calls == []
    assert "bogus" in caplog.text


def test_message_without_command_is_a_protocol_error(bolt):
    with pytest.raises(ShellProtocolError, match="command not found"):
        bolt.dispatch({"tuple": ["a"]})


def test_emit_without_a_tuple_list_is_a_protocol_error(bolt):
    with pytest.raises(ShellProtocolError, match="tuple"):
        bolt.dispatch({"command": "emit", "tuple": "a"})


def test_collector_errors_propagate_unchanged(bolt, collector):
    collector.refuse = RuntimeError("undeclared stream")
    with pytest.raises(RuntimeError, match="undeclared stream"):
        bolt.dispatch({"command": "emit", "tuple": ["a"]})
