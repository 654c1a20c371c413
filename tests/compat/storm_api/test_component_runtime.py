"""Component behaviour not visible in a wire diff: construction, modes, exits."""
from __future__ import annotations

import io
import logging
import signal
import sys
import threading

import pytest

from compat.storm_api import component as component_module
from compat.storm_api.bolt import BatchingBolt, Bolt, TicklessBatchingBolt
from compat.storm_api.collector import ProtocolCollector, dispatch_message
from compat.storm_api.component import Component
from compat.storm_api.spout import ReliableSpout, Spout
from tests.compat.storm_api.storm_api_wire import BOLT_CONTEXT, decode


class Calls:
    """Collector recording calls in order."""

    def __init__(self, task_ids=None):
        self.calls = []
        self.task_ids = task_ids or [11, 12]

    def emit(self, values, stream, anchors, direct_task, need_task_ids, tup_id):
        self.calls.append(
            ("emit", list(values), stream, anchors, direct_task, need_task_ids, tup_id)
        )
        return self.task_ids if need_task_ids and direct_task is None else None

    def __getattr__(self, name):
        if name in ("ack", "fail", "log", "error", "metric", "sync"):
            return lambda *args: self.calls.append((name, *args))
        raise AttributeError(name)


def new(cls, **kwargs):
    return cls(input_stream=io.BytesIO(), output_stream=io.BytesIO(), rdb_signal=None, **kwargs)


def bound(cls, conf=None, context=None, collector=None):
    component = new(cls)
    component._bind(
        {"topology.name": "t", **(conf or {})},
        BOLT_CONTEXT if context is None else context,
        collector or Calls(),
        logging.getLogger("test.bound"),
    )
    return component


def test_class_attribute_defaults_match_pystorm_and_streamparse():
    assert (Component.outputs, Component.par, Component.config, Component.exit_on_exception) == (
        None,
        1,
        None,
        True,
    )
    assert (Bolt.auto_anchor, Bolt.auto_ack, Bolt.auto_fail) == (True, True, True)
    assert (
        BatchingBolt.ticks_between_batches == 1 and TicklessBatchingBolt.secs_between_batches == 2
    )
    assert ReliableSpout.max_fails == 3


def test_bare_component_spec_raises_type_error():
    with pytest.raises(TypeError, match="Specifications should either be bolts or spouts"):
        Component.spec()


def test_unknown_serializer_is_a_value_error():
    with pytest.raises(ValueError, match="Unknown serializer: xml"):
        new(Component, serializer="xml")


def test_rdb_signal_installs_the_remote_debugger_handler_only_when_asked():
    previous = signal.getsignal(signal.SIGUSR1)
    try:
        new(Bolt)
        assert signal.getsignal(signal.SIGUSR1) is previous
        Bolt(input_stream=io.BytesIO(), output_stream=io.BytesIO())
        assert signal.getsignal(signal.SIGUSR1) is component_module.remote_pdb_handler
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_emit_rejects_values_that_are_not_lists_or_tuples():
    with pytest.raises(TypeError, match="All Tuples must be either lists or tuples"):
        bound(Spout).emit("word")


@pytest.mark.parametrize("threads, expected", [(1, "sys.exit"), (2, "os._exit")])
def test_exit_uses_os_exit_only_when_other_threads_are_alive(monkeypatch, threads, expected):
    used = []
    monkeypatch.setattr(component_module.threading, "active_count", lambda: threads)
    monkeypatch.setattr(component_module.os, "_exit", lambda code: used.append(("os._exit", code)))
    monkeypatch.setattr(component_module.sys, "exit", lambda code: used.append(("sys.exit", code)))
    new(Bolt)._exit(2)
    assert used == [(expected, 2)]


def test_protocol_collector_builds_pystorms_dicts():
    sent = []
    component = new(Bolt)
    component.send_message = sent.append
    component._pending_task_ids.append([4])
    collector = ProtocolCollector(component)
    assert collector.emit(["a"], None, [], None, True, None) == [4]
    collector.emit(("b",), "s", None, 3, False, "id")
    collector.metric("m", 1)
    assert sent == [
        {"command": "emit", "tuple": ["a"], "anchors": []},
        {
            "command": "emit",
            "tuple": ("b",),
            "id": "id",
            "stream": "s",
            "task": 3,
            "need_task_ids": False,
        },
        {"command": "metrics", "name": "m", "params": 1},
    ]


def test_bind_sets_identity_and_values_types_without_touching_logging_or_stdout():
    root_handlers = list(logging.getLogger().handlers)
    stdout = sys.stdout
    logger = logging.getLogger("test.identity")
    component = new(Bolt)
    component._bind(
        {"topology.name": "topo", "topology.debug": True}, BOLT_CONTEXT, Calls(), logger
    )
    assert (
        component.topology_name,
        component.task_id,
        component.component_name,
        component.debug,
    ) == ("topo", 3, "split-bolt", True)
    assert component.logger is logger and component.context is BOLT_CONTEXT
    assert (
        component._make_tuple("1", "sentence-spout", "default", 1, ["hi"]).values.sentence == "hi"
    )
    assert logging.getLogger().handlers == root_handlers and sys.stdout is stdout


def test_component_name_falls_back_to_task_to_component():
    component = bound(Spout, context={"taskid": 7, "task->component": {"7": "legacy"}})
    assert component.component_name == "legacy"


def test_bound_bolt_routes_every_output_to_its_collector():
    calls = Calls()
    component = bound(Bolt, collector=calls)
    tup = component._make_tuple("1", "sentence-spout", "default", 1, ["x"])
    component._current_tups = [tup]
    assert component.emit(["a"]) is None
    assert component.emit(["b"], need_task_ids=True) == [11, 12]
    assert component.emit(["c"], direct_task=4, need_task_ids=True) == [4]
    component.log("hello", "warn")
    component.report_metric("m", 2)
    component.ack(tup)
    component.fail("raw")
    assert calls.calls == [("emit", ["a"], None, ["1"], None, False, None),
                           ("emit", ["b"], None, ["1"], None, True, None),
                           ("emit", ["c"], None, ["1"], 4, True, None),
                           ("log", "hello", 3), ("metric", "m", 2), ("ack", "1"), ("fail", "raw")]


def test_bound_send_message_dispatches_and_queues_task_ids():
    calls = Calls(task_ids=[5])
    component = bound(Bolt, collector=calls)
    component.send_message({"command": "emit", "tuple": ["x"], "anchors": "one-id"})
    assert component.read_task_ids() == [5]
    component.send_message("not a dict")
    assert calls.calls == [("emit", ["x"], None, ["one-id"], None, True, None)]


def test_dispatch_rejects_commands_a_component_cannot_send():
    with pytest.raises(ValueError, match="not a multi-lang command"):
        dispatch_message(Calls(), {"pid": 1})


def test_stdout_is_redirected_to_logging_when_the_component_writes_to_it(monkeypatch, tmp_path):
    fake_stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", fake_stdout)
    component = Bolt(input_stream=io.BytesIO(), output_stream=fake_stdout, rdb_signal=None)
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        component._setup_component({"topology.name": "t"}, BOLT_CONTEXT)
        assert isinstance(sys.stdout, component_module.LogStream)
        print("hello from user code")
    finally:
        for handler in root.handlers[:]:
            if handler not in before:
                root.removeHandler(handler)
    messages = decode(fake_stdout.buffer.getvalue(), "json")
    assert messages[-1]["command"] == "log" and "hello from user code" in messages[-1]["msg"]


def test_spout_is_exhausted_defaults_to_false():
    assert bound(Spout).is_exhausted() is False


class SlowBatches(TicklessBatchingBolt):
    secs_between_batches = 0.05

    def process_batch(self, key, tups):
        if tups[0].values.sentence == "bad":
            raise ValueError("batch broke")
        self.emit([len(tups)])


def test_bound_tickless_bolt_stores_batcher_failure_and_raises_it_on_next_tuple():
    previous = signal.getsignal(signal.SIGUSR1)
    calls = Calls()
    component = bound(SlowBatches, collector=calls)
    try:
        component._process_tuple(
            component._make_tuple("1", "sentence-spout", "default", 1, ["bad"])
        )
        component._batcher.join(5)
        assert not component._batcher.is_alive() and component.exc_info is not None
        with pytest.raises(ValueError, match="batch broke"):
            component._process_tuple(
                component._make_tuple("2", "sentence-spout", "default", 1, ["ok"])
            )
        assert signal.getsignal(signal.SIGUSR1) is previous
    finally:
        component._close()


def test_tickless_close_stops_the_batcher_thread():
    component = bound(SlowBatches)
    component._close()
    assert not component._batcher.is_alive()
    assert threading.current_thread().name == "MainThread"
