"""The component API's per-tuple path in an instance (``engine.instance.api``, compiled
where it is built; tests/engine/codec runs this file on the pure twin too): a stock
spout's and bolt's ``emit`` and a bolt's batch take one call each, and a subclass that
overrides any step behaves exactly as under pystorm.

"As under pystorm" is checked against the reference: the same class hosted on a collector
that records calls and offers no shortcut, driven one tuple at a time through
``HostedBolt.execute`` / ``HostedSpout.next_tuple`` (``Bolt._process_tuple`` and the other
methods pystorm's own ``_run`` calls; tests/compat holds those equal to pystorm's)."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import msgpack
import pytest

from compat.storm_api import Bolt, Spout
from compat.storm_api.exceptions import ComponentFailure
from compat.storm_api.hosting import host_component
from compat.storm_api.tuple import Tuple
from engine.common.codec import selected_module
from engine.common.runtime.stats import TaskStats
from engine.common.serialization import serializer_for_config
from engine.instance.bolt_loop import BoltLoop
from engine.instance.collector import CONTROL_BATCH, InstanceCollector, StreamOut
from engine.instance.spout_loop import SpoutLoop
from engine.messages import tuple_pb2

SOURCE, STREAM = "words", "default"
#: the component API path this process runs (compiled where built)
api_path = selected_module("api")
LOG = logging.getLogger("test.api_path")
CONTEXT = {"taskid": 5, "componentid": "counter",
           "task->component": {"1": SOURCE, "5": "counter"},
           "source->stream->fields": {SOURCE: {STREAM: ["word", "n"]}}}
CONF = {"topology.name": "t"}
WORDS = [("a", 1), ("boom", 2), ("c", 3), ("d", 4)]


class Recording:
    """A collector with no shortcut (no ``spout_emit``, ``bolt_emit_for``, ``run_tuples``):
    every call the component makes, in order."""

    tracks_anchors = True

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def emit(self, values, stream, anchors, direct_task, need_task_ids, tup_id):
        self.calls.append(("emit", list(values), stream or "default", anchors, tup_id))
        return [7] if need_task_ids else None

    def ack(self, tup_id):
        self.calls.append(("ack", tup_id))

    def fail(self, tup_id):
        self.calls.append(("fail", tup_id))

    def log(self, msg, level):
        pass

    def error(self, msg):
        self.calls.append(("error", msg.splitlines()[0]))

    def metric(self, name, value):
        pass

    def sync(self):
        pass


# -- bolts: the stock one, and one subclass per overridden step -------------------------
class Counter(Bolt):
    outputs = ["word", "count"]
    exit_on_exception = False  # "boom" raises; the bolt keeps running, as pystorm's can

    def initialize(self, conf: dict, ctx: dict) -> None:
        self.trace: list[tuple] = []

    def process(self, tup) -> None:
        if tup.values.word == "boom":
            raise ValueError("boom")
        self.emit([tup.values.word, tup.values.n])


class OwnEmit(Counter):
    def emit(self, tup, **kwargs):
        self.trace.append(("emit", list(tup)))
        return super().emit([tup[0].upper(), tup[1]], **kwargs)


class OwnAck(Counter):
    def ack(self, tup):
        self.trace.append(("ack", tup.id))
        super().ack(tup)


class OwnFail(Counter):
    def fail(self, tup):
        self.trace.append(("fail", tup.id))
        super().fail(tup)


class OwnProcessTick(Counter):
    def process_tick(self, tup):
        self.trace.append(("tick", tup.values))
        self.emit(["tick", 0])


class OwnProcessTuple(Counter):
    def _process_tuple(self, tup):
        self.trace.append(("_process_tuple", tup.id))
        super()._process_tuple(tup)


class ManualAck(Counter):
    auto_ack = False

    def process(self, tup) -> None:
        super().process(tup)
        self.ack(tup)


class AnchorsByHand(Counter):
    def process(self, tup) -> None:
        if tup.values.word == "boom":
            raise ValueError("boom")
        self.emit([tup.values.word, tup.values.n], anchors=[tup, tup.id])
        self.emit([tup.values.word, -1], anchors=[])


BOLTS = [Counter, OwnEmit, OwnAck, OwnFail, OwnProcessTick, OwnProcessTuple, ManualAck,
         AnchorsByHand]


def pack(*values: Any) -> bytes:
    return msgpack.packb(list(values), use_bin_type=True)


def tuple_batch(words: list[tuple[str, int]], acking: bool) -> bytes:
    message = tuple_pb2.TupleBatch(src_task_id=1, values=[pack(*w) for w in words])
    message.stream.component_name = SOURCE
    message.stream.id = STREAM
    if acking:
        roots = list(range(11, 11 + len(words)))
        message.root_counts.extend([1] * len(roots))
        message.root_tasks.extend([1] * len(roots))
        message.root_keys.extend(roots)
        message.edge_keys.extend(r * 10 for r in roots)
    return message.SerializeToString()


def instance_bolt(cls: type, acking: bool) -> tuple[BoltLoop, list[list[bytes]]]:
    sent: list[list[bytes]] = []
    serializer = serializer_for_config({})
    streams = {"default": StreamOut("default", ("word", "count"), False, [], [], leaf=False,
                                    captured=False)}
    collector = InstanceCollector("counter", 5, streams, serializer, TaskStats("counter", 5),
                                  LOG, sent.append, 1024, None, acking=acking)

    def factory():
        return host_component(cls, dict(CONF), CONTEXT, collector, LOG)

    loop = BoltLoop(None, SimpleNamespace(component="counter", task_id=5), factory, collector,
                    lambda: True, loads=serializer.loads, loads_many=serializer.loads_many,
                    tick_secs=None, shell=False)
    loop.hosted = loop.factory()
    return loop, sent


def instance_outputs(loop: BoltLoop, sent: list[list[bytes]]) -> tuple[list, list, list]:
    """(emitted rows, their trees' root keys, the acked trees' root keys) the instance sent."""
    loop.collector.flush()
    rows, trees, acked = [], [], []
    for kind, payload in sent:
        if kind == CONTROL_BATCH:
            control = tuple_pb2.ControlBatch.FromString(payload)
            acked += [(k, r) for k, r in zip(control.kinds, control.root_keys)]
            continue
        batch = tuple_pb2.TupleBatch.FromString(payload)
        counts = list(batch.root_counts) or [0] * len(batch.values)
        keys = iter(batch.root_keys)
        for value, count in zip(batch.values, counts):
            rows.append(msgpack.unpackb(value))
            trees.append([next(keys) for _ in range(count)])
    return rows, trees, acked


def reference_bolt(cls: type, acking: bool) -> tuple[Any, Recording]:
    """The class driven as pystorm drives it: Bolt._process_tuple per tuple, the Storm
    API's own emit, ack and fail, every call recorded."""
    recording = Recording()
    recording.tracks_anchors = acking
    hosted = host_component(cls, dict(CONF), CONTEXT, recording, LOG)
    for i, (word, n) in enumerate(WORDS, start=1):
        hosted.execute(hosted.make_tuple(str(i), SOURCE, STREAM, 1, [word, n]))
    hosted.execute(hosted.make_tuple(str(len(WORDS) + 1), "__system", "__tick", -1, [1]))
    return hosted.component, recording


@pytest.mark.parametrize("acking", [False, True], ids=["at-most-once", "at-least-once"])
@pytest.mark.parametrize("cls", BOLTS, ids=[c.__name__ for c in BOLTS])
def test_a_bolt_subclass_overriding_any_step_behaves_as_under_pystorm(cls, acking):
    reference, recording = reference_bolt(cls, acking)
    loop, sent = instance_bolt(cls, acking)
    loop._process_batch(tuple_batch(WORDS, acking))
    tick_id = str(len(WORDS) + 1)
    if acking:
        loop.collector.register_input(tick_id, (), 0)
    loop._execute(loop.hosted.make_tuple(tick_id, "__system", "__tick", -1, [1]))
    component = loop.hosted.component

    # what the overridden steps saw, call for call
    assert component.trace == reference.trace
    # what was emitted, in order, and with which anchors
    rows, trees, acked = instance_outputs(loop, sent)
    assert rows == [call[1] for call in recording.calls if call[0] == "emit"]
    root_of = {str(i): 10 + i for i in range(1, len(WORDS) + 1)}
    if acking:
        assert trees == [sorted({root_of[a] for a in call[3] if a in root_of})
                         for call in recording.calls if call[0] == "emit"]
        # the trees acked and failed: those of the ids the reference acked and failed
        assert acked == [(tuple_pb2.ACK if call[0] == "ack" else tuple_pb2.FAIL,
                          root_of[call[1]])
                         for call in recording.calls
                         if call[0] in ("ack", "fail") and call[1] in root_of]
    else:
        assert all(tree == [] for tree in trees)
    # acks and fails counted as the reference made them, "boom" reported once
    assert loop.stats.acked == sum(1 for c in recording.calls if c[0] == "ack")
    assert loop.stats.failed == sum(1 for c in recording.calls if c[0] == "fail")
    assert loop.stats.errors == 1 == sum(1 for c in recording.calls if c[0] == "error")
    assert loop.stats.executed == len(WORDS)


def test_a_stock_bolt_and_spout_emit_in_one_call_and_an_override_keeps_its_own():
    loop, _ = instance_bolt(Counter, acking=False)
    emit = loop.hosted.component.emit
    assert getattr(emit, "__func__", None) is not Bolt.emit  # the collector's, not Bolt.emit
    loop, _ = instance_bolt(OwnEmit, acking=False)
    assert loop.hosted.component.emit.__func__ is OwnEmit.emit
    # the batch runs in the tuple path's loop only where that is exact
    assert loop.hosted.batch_runner(SOURCE, STREAM, 1) is not None
    for cls in (OwnAck, OwnProcessTuple):
        assert instance_bolt(cls, acking=False)[0].hosted.batch_runner(SOURCE, STREAM, 1) is None


def test_a_failing_process_stops_the_batch_where_it_raised_and_the_rest_runs_after_restart():
    class Strict(Counter):
        exit_on_exception = True

    loop, sent = instance_bolt(Strict, acking=True)
    restarts: list[ComponentFailure] = []

    def restart(failure, executing=False):
        restarts.append(failure)
        loop.hosted = loop.factory()
    loop.restart = restart
    loop._process_batch(tuple_batch(WORDS, acking=True))
    assert [str(f.original) for f in restarts] == ["boom"]
    rows, _, acked = instance_outputs(loop, sent)
    # "a" before the failure, "c" and "d" by the restarted bolt; "boom" failed its tree
    assert rows == [["a", 1], ["c", 3], ["d", 4]]
    assert acked == [(tuple_pb2.ACK, 11), (tuple_pb2.FAIL, 12), (tuple_pb2.ACK, 13),
                     (tuple_pb2.ACK, 14)]
    assert loop.stats.executed == len(WORDS)


# -- spouts ------------------------------------------------------------------------------
class WordSpout(Spout):
    outputs = ["word", "n"]
    exit_on_exception = False

    def initialize(self, conf: dict, ctx: dict) -> None:
        self.left = list(WORDS)
        self.trace: list[tuple] = []

    def next_tuple(self) -> None:
        if not self.left:
            return
        word, n = self.left.pop(0)
        if word == "boom":
            raise ValueError("boom")
        self.emit([word, n], tup_id=f"id-{n}" if n % 2 else None)

    def ack(self, tup_id) -> None:
        self.trace.append(("ack", tup_id))


class SpoutOwnEmit(WordSpout):
    def emit(self, tup, tup_id=None, **kwargs):
        self.trace.append(("emit", list(tup), tup_id))
        return super().emit([tup[0] * 2, tup[1]], tup_id=tup_id, **kwargs)


class SpoutNeedsTaskIds(WordSpout):
    def next_tuple(self) -> None:
        if self.left:
            word, n = self.left.pop(0)
            self.trace.append(("tasks", self.emit([word, n], need_task_ids=True)))


SPOUTS = [WordSpout, SpoutOwnEmit, SpoutNeedsTaskIds]


def instance_spout(cls: type) -> tuple[SpoutLoop, list[list[bytes]]]:
    sent: list[list[bytes]] = []
    serializer = serializer_for_config({})
    streams = {"default": StreamOut("default", ("word", "n"), False, [],
                                    [SimpleNamespace(choose=lambda values, direct: [7])],
                                    leaf=False, captured=False)}
    collector = InstanceCollector(SOURCE, 1, streams, serializer, TaskStats(SOURCE, 1), LOG,
                                  sent.append, 1024, None, acking=False)
    context = {"taskid": 1, "componentid": SOURCE, "task->component": {"1": SOURCE}}

    def factory():
        return host_component(cls, dict(CONF), context, collector, LOG)

    loop = SpoutLoop(None, SimpleNamespace(component=SOURCE, task_id=1), factory, collector,
                     lambda: True)
    loop.hosted = loop.factory()
    loop.active = True
    return loop, sent


@pytest.mark.parametrize("cls", SPOUTS, ids=[c.__name__ for c in SPOUTS])
def test_a_spout_subclass_overriding_emit_behaves_as_under_pystorm(cls):
    recording = Recording()
    reference = host_component(cls, dict(CONF), {"taskid": 1, "componentid": SOURCE,
                                                 "task->component": {"1": SOURCE}},
                               recording, LOG)
    for _ in range(len(WORDS) + 1):
        done = len(recording.calls)
        reference.next_tuple()
        # at-most-once, a message id is acked as soon as the call that emitted it returns
        for call in recording.calls[done:]:
            if call[0] == "emit" and call[4] is not None:
                reference.ack(call[4])

    loop, sent = instance_spout(cls)
    while loop._burst(loop.hosted):
        pass
    loop._burst(loop.hosted)  # past "boom", which raised and was reported
    loop.collector.flush()
    rows = [msgpack.unpackb(v) for kind, payload in sent if kind != CONTROL_BATCH
            for v in tuple_pb2.TupleBatch.FromString(payload).values]
    assert rows == [c[1] for c in recording.calls if c[0] == "emit"]
    assert loop.hosted.component.trace == reference.component.trace
    assert loop.stats.errors == sum(1 for c in recording.calls if c[0] == "error")


def test_a_spout_emit_keeps_the_storm_api_s_errors():
    loop, _ = instance_spout(WordSpout)
    spout = loop.hosted.component
    with pytest.raises(TypeError, match="All Tuples must be either lists or tuples"):
        spout.emit("word")
    with pytest.raises(Exception, match="undeclared stream 'nope'"):
        spout.emit(["a", 1], stream="nope")
    with pytest.raises(Exception, match="declares 2 field"):
        spout.emit(["a"])
    assert spout.emit(["a", 1], need_task_ids=True) == [7]
    assert spout.emit(["a", 1]) is None


def test_the_selected_api_path_is_the_one_the_collector_runs():
    assert issubclass(InstanceCollector, api_path.CollectorCore)
    assert isinstance(Tuple("1", SOURCE, STREAM, 1, ("a", 1)), tuple)
