"""How a bolt instance turns an arriving batch into the tuples its component sees: every
row in order, as the namedtuple values a streamparse bolt reads, under string ids; a row
that does not decode or does not fit the stream is dropped alone, and under acking the
others still ack the trees they belong to."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import msgpack
import pytest

from compat.storm_api import Bolt
from compat.storm_api.hosting import host_component
from engine.common.runtime.stats import TaskStats
from engine.common.serialization import serializer_for_config
from engine.instance.bolt_loop import BoltLoop
from engine.instance.collector import CONTROL_BATCH, InstanceCollector, StreamOut
from engine.messages import tuple_pb2

SOURCE, STREAM = "words", "default"


class Recorder(Bolt):
    outputs = ["word", "count"]

    def initialize(self, conf: dict, ctx: dict) -> None:
        self.seen: list[tuple[str, int, str, str, int]] = []

    def process(self, tup) -> None:
        self.seen.append((tup.id, tup.task, tup.component, tup.stream, tup.values.word,
                          tup.values.n))
        self.emit([tup.values.word, tup.values.n])


def bolt_loop(acking: bool) -> tuple[BoltLoop, list[list[bytes]]]:
    sent: list[list[bytes]] = []
    serializer = serializer_for_config({})
    streams = {"default": StreamOut("default", ("word", "count"), False, [], [], leaf=False,
                                    captured=False)}
    collector = InstanceCollector("counter", 5, streams, serializer, TaskStats("counter", 5),
                                  logging.getLogger("test"), sent.append, 1024, None,
                                  acking=acking)
    context = {"taskid": 5, "task->component": {"1": SOURCE, "5": "counter"},
               "source->stream->fields": {SOURCE: {STREAM: ["word", "n"]}}}
    conf = {"topology.name": "t"}

    def factory():
        return host_component(Recorder, conf, context, collector, logging.getLogger("test"))

    loop = BoltLoop(None, SimpleNamespace(component="counter", task_id=5), factory, collector,
                    lambda: True, loads=serializer.loads, loads_many=serializer.loads_many,
                    tick_secs=None, shell=False)
    loop.hosted = loop.factory()
    return loop, sent


def batch(blobs: list[bytes], roots: list[int] | None = None) -> bytes:
    message = tuple_pb2.TupleBatch(src_task_id=1, values=blobs)
    message.stream.component_name = SOURCE
    message.stream.id = STREAM
    if roots is not None:
        message.root_counts.extend([1] * len(roots))
        message.root_tasks.extend([1] * len(roots))
        message.root_keys.extend(roots)
        message.edge_keys.extend(r * 10 for r in roots)
    return message.SerializeToString()


def pack(*values) -> bytes:
    return msgpack.packb(list(values), use_bin_type=True)


def test_every_row_reaches_the_bolt_in_order_as_its_fields():
    loop, _ = bolt_loop(acking=False)
    loop._process_batch(batch([pack("a", 1), pack("b", 2), pack("c", 3)]))
    loop._process_batch(batch([pack("d", 4)]))
    assert loop.hosted.component.seen == [
        ("1", 1, SOURCE, STREAM, "a", 1), ("2", 1, SOURCE, STREAM, "b", 2),
        ("3", 1, SOURCE, STREAM, "c", 3), ("4", 1, SOURCE, STREAM, "d", 4)]
    assert loop.stats.executed == 4


@pytest.mark.parametrize("bad", [pack("x", 1)[:-1] + b"\xc1",  # not msgpack
                                 pack("x", 1, 2),               # three values, two fields
                                 msgpack.packb(7)])             # not a row at all
def test_a_bad_row_is_dropped_alone_and_acking_stays_aligned(bad, caplog):
    loop, sent = bolt_loop(acking=True)
    with caplog.at_level(logging.WARNING, logger="heron.instance"):
        loop._process_batch(batch([pack("a", 1), bad, pack("c", 3)], roots=[11, 12, 13]))
    assert [s[4] for s in loop.hosted.component.seen] == ["a", "c"]
    assert [s[0] for s in loop.hosted.component.seen] == ["1", "3"]  # ids keep their rows
    assert loop.malformed == 1
    assert any("does not decode" in r.getMessage() for r in caplog.records)
    loop.collector.flush()
    acks = [tuple_pb2.ControlBatch.FromString(f[1]) for f in sent if f[0] == CONTROL_BATCH]
    # the good rows acked their own trees with their own copy keys; the bad row's tree is
    # left to time out and be replayed, as a lost tuple's would
    assert [(list(a.root_keys), list(a.tuple_keys)) for a in acks] == [([11, 13], [110, 130])]


def test_the_bolt_emits_anchor_ids_only_when_trees_are_tracked():
    for acking in (False, True):
        loop, sent = bolt_loop(acking=acking)
        loop._process_batch(batch([pack("a", 1)], roots=[21] if acking else None))
        loop.collector.flush()
        data = [tuple_pb2.TupleBatch.FromString(f[1]) for f in sent if f[0] != CONTROL_BATCH]
        assert [msgpack.unpackb(v) for d in data for v in d.values] == [["a", 1]]
        # at-least-once: the emit is anchored to the input's tree; at-most-once: no tree
        assert [list(d.root_keys) for d in data] == ([[21]] if acking else [[]])


def test_loads_many_refuses_a_stream_that_does_not_split_into_the_blobs():
    serializer = serializer_for_config({})
    good = [pack("a", 1), pack("b", 2)]
    assert serializer.loads_many(good) == [["a", 1], ["b", 2]]
    for blobs in ([good[0][:-1], good[1]], [good[0] + b"\x01", good[1]]):
        with pytest.raises(ValueError):
            serializer.loads_many(blobs)
    pickled = serializer_for_config({"topology.tuple.serializer": "pickle"})
    assert pickled.loads_many([pickled.dumps(["a", 1])]) == [["a", 1]]
