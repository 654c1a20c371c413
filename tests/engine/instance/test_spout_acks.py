"""A spout instance hands the Stream Manager's acks and fails to the spout's own ``ack``
and ``fail``: one that raises is reported and the spout restarted (or, with
``exit_on_exception = False``, kept), and the rest of the batch still reaches the spout."""

from __future__ import annotations

import logging
from types import SimpleNamespace

from compat.storm_api import Spout
from compat.storm_api.hosting import host_component
from engine.common.runtime.stats import TaskStats
from engine.common.serialization import MsgpackSerializer
from engine.instance.collector import InstanceCollector
from engine.instance.spout_loop import SpoutLoop
from engine.messages import tuple_pb2

CONTEXT = {"taskid": 1, "componentid": "ids", "task->component": {"1": "ids"},
           "streams": ["default"], "stream->outputfields": {"default": ["id"]},
           "stream->target->grouping": {}, "source->stream->grouping": {},
           "source->stream->fields": {}}
#: every spout the loop made, oldest first
MADE: list[Spout] = []


class AckRecorder(Spout):
    outputs = ["id"]

    def initialize(self, conf, ctx):
        self.acked, self.failed = [], []
        MADE.append(self)

    def next_tuple(self):
        pass

    def ack(self, tup_id):
        if tup_id == "bad":
            raise RuntimeError("cannot ack bad")
        self.acked.append(tup_id)

    def fail(self, tup_id):
        self.failed.append(tup_id)


class KeepsRunning(AckRecorder):
    exit_on_exception = False


def spout_loop(pipe, cls):
    MADE.clear()
    stats = TaskStats("ids", 1)
    collector = InstanceCollector("ids", 1, {}, MsgpackSerializer(), stats,
                                  logging.getLogger("test.acks"), lambda frames: None, 100,
                                  None, acking=True)
    factory = lambda: host_component(cls, {}, CONTEXT, collector,  # noqa: E731
                                     logging.getLogger("test.acks"))
    # not running: metrics the loop publishes on a failure are dropped, not waited for
    loop = SpoutLoop(pipe, SimpleNamespace(component="ids", task_id=1), factory, collector,
                     lambda: False, max_pending=10, timeout_secs=30.0)
    loop.hosted = factory()
    for root, tup_id in ((11, "first"), (12, "bad"), (13, "after"), (14, "lost")):
        collector.pending_roots[root] = (tup_id, 0.0)
    return loop


def settle(loop):
    batch = tuple_pb2.ControlBatch(kinds=[tuple_pb2.ACK, tuple_pb2.ACK, tuple_pb2.ACK,
                                          tuple_pb2.FAIL],
                                   root_keys=[11, 12, 13, 14])
    loop._settle(batch.SerializeToString())


def test_an_ack_that_raises_restarts_the_spout_and_the_batch_goes_on(pipe):
    loop = spout_loop(pipe, AckRecorder)
    settle(loop)
    assert len(MADE) == 2 and loop.hosted.component is MADE[1]
    assert (MADE[0].acked, MADE[0].failed) == (["first"], [])
    assert (MADE[1].acked, MADE[1].failed) == (["after"], ["lost"])
    assert loop.restarts == 1 and "cannot ack bad" in loop.exceptions[0][0]
    assert not loop.collector.pending_roots


def test_a_spout_that_keeps_running_gets_the_rest_of_the_batch_itself(pipe):
    loop = spout_loop(pipe, KeepsRunning)
    settle(loop)
    assert len(MADE) == 1
    assert (MADE[0].acked, MADE[0].failed) == (["first", "after"], ["lost"])
    assert loop.restarts == 0


def test_a_malformed_ack_batch_is_dropped_whole_and_the_spout_keeps_its_trees(pipe, caplog):
    loop = spout_loop(pipe, AckRecorder)
    # four roots and three kinds: which tree each kind is for cannot be told
    batch = tuple_pb2.ControlBatch(kinds=[tuple_pb2.ACK] * 3, root_keys=[11, 12, 13, 14])
    with caplog.at_level(logging.WARNING):
        loop._settle(batch.SerializeToString())
    assert "dropped a malformed ack batch" in caplog.text
    assert (MADE[0].acked, MADE[0].failed) == ([], [])
    assert list(loop.collector.pending_roots) == [11, 12, 13, 14]
    settle(loop)  # a good batch after it settles them
    assert not loop.collector.pending_roots


class FailRaises(AckRecorder):
    def fail(self, tup_id):
        if tup_id == "bad":
            raise RuntimeError("cannot fail bad")
        self.failed.append(tup_id)


def test_timeouts_fail_every_old_tree_even_when_a_fail_restarts_the_spout(pipe):
    loop = spout_loop(pipe, FailRaises)
    loop.timeout_secs = 1.0
    young = loop.collector.pending_roots[14] = ("young", 1e12)  # emitted "later"
    # an ack first: progress, so the spout is restarted at once when its fail raises
    loop._settle(tuple_pb2.ControlBatch(kinds=[tuple_pb2.ACK],
                                        root_keys=[11]).SerializeToString())
    loop._expire()
    assert len(MADE) == 2 and loop.restarts == 1
    # the tree after the one whose fail raised is failed to the restarted spout
    assert (MADE[0].acked, MADE[0].failed, MADE[1].failed) == (["first"], [], ["after"])
    assert loop.timed_out == 2 and loop.collector.pending_roots == {14: young}
