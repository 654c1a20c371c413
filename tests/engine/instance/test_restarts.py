"""A component that raises is restarted inside its instance, forever, under the restart
policy: at once after progress, with backoff (initial, doubling, capped) while it makes
none, crash-looping after three failures in a row with no progress (published as
``__crash-looping`` with ``__last-error``), and no longer once it makes progress."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import msgpack
import pytest
import zmq

from compat.storm_api import Bolt, Spout
from compat.storm_api.hosting import host_component
from engine.common.process.restart_policy import RestartPolicy
from engine.common.runtime.stats import TaskStats
from engine.common.serialization import serializer_for_config
from engine.instance.bolt_loop import BoltLoop
from engine.instance.collector import InstanceCollector, StreamOut
from engine.instance.spout_loop import SpoutLoop
from engine.messages import metrics_pb2, tuple_pb2

pytestmark = pytest.mark.timeout(30)

POLICY = RestartPolicy(initial_ms=10, max_ms=40)
SOURCE, STREAM = "words", "default"
OPENS: list[int] = []


@pytest.fixture()
def metrics():
    """(PUSH socket for the loop's metrics pipe, function returning what was published)."""
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.bind("inproc://metrics")
    push = ctx.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 0)
    push.connect("inproc://metrics")

    def published() -> list[dict[str, str]]:
        out = []
        while pull.poll(0):
            message = metrics_pb2.MetricPublisherPublishMessage.FromString(
                pull.recv_multipart()[1])
            out.append({m.name: m.value for m in message.metrics})
        return out

    yield push, published
    push.close(linger=0)
    pull.close(linger=0)
    ctx.term()


class RaisesEveryFifth(Bolt):
    outputs = ["word"]

    def process(self, tup) -> None:
        if tup.values.n % 5 == 0:
            raise RuntimeError(f"tuple {tup.values.n}")
        self.emit([tup.values.word])


class OpensOnTheFourthTry(Spout):
    outputs = ["id"]

    def initialize(self, conf, ctx):
        OPENS.append(1)
        if len(OPENS) <= 3:
            raise ConnectionError(f"open failed ({len(OPENS)})")
        self.n = 0

    def next_tuple(self):
        self.n += 1
        if self.n == 3:
            raise ValueError("spout broke after progress")
        self.emit([self.n])


class NeverOpens(Spout):
    outputs = ["id"]

    def initialize(self, conf, ctx):
        raise ConnectionError("no broker")

    def next_tuple(self):
        pass


def collector_for(component: str, task: int, fields: tuple[str, ...]) -> InstanceCollector:
    streams = {"default": StreamOut("default", fields, False, [], [], leaf=False,
                                    captured=False)}
    return InstanceCollector(component, task, streams, serializer_for_config({}),
                             TaskStats(component, task), logging.getLogger("test"),
                             lambda frames: None, 1024, None, acking=False)


def spout_loop(cls, metrics_pipe, running=lambda: True) -> SpoutLoop:
    collector = collector_for("ids", 1, ("id",))
    context = {"taskid": 1, "componentid": "ids", "task->component": {"1": "ids"}}
    factory = lambda: host_component(cls, {}, context, collector,  # noqa: E731
                                     logging.getLogger("test"))
    loop = SpoutLoop(None, SimpleNamespace(component="ids", task_id=1), factory, collector,
                     running, restart_policy=POLICY)
    loop.metrics_pipe = metrics_pipe
    return loop


def test_a_bolt_raising_every_fifth_tuple_executes_every_tuple_restarting_at_once(metrics):
    push, published = metrics
    serializer = serializer_for_config({})
    collector = collector_for("counter", 5, ("word",))
    context = {"taskid": 5, "task->component": {"1": SOURCE, "5": "counter"},
               "source->stream->fields": {SOURCE: {STREAM: ["word", "n"]}}}
    made = []

    def factory():
        made.append(host_component(RaisesEveryFifth, {}, context, collector,
                                   logging.getLogger("test")))
        return made[-1]

    loop = BoltLoop(None, SimpleNamespace(component="counter", task_id=5), factory, collector,
                    lambda: True, restart_policy=RestartPolicy(initial_ms=60_000, max_ms=60_000),
                    loads=serializer.loads, loads_many=serializer.loads_many, tick_secs=None,
                    shell=False)
    loop.metrics_pipe = push
    loop.start_component()
    for first in range(1, 41, 10):
        message = tuple_pb2.TupleBatch(src_task_id=1, values=[
            msgpack.packb([f"w{n}", n]) for n in range(first, first + 10)])
        message.stream.component_name = SOURCE
        message.stream.id = STREAM
        loop._process_batch(message.SerializeToString())
    assert loop.stats.executed == 40 and collector.emitted == 32
    assert len(made) == 9 and loop.restarts == 8  # never given up, one fresh bolt per failure
    records = list(loop.restart_tracker.records)
    assert [r.delay_ms for r in records] == [0] * 8  # progress each time: no backoff at all
    assert all(r.progressed and not r.crash_looping for r in records)
    assert published()[-1]["__crash-looping"] == "0"


def test_a_spout_failing_in_open_backs_off_and_is_crash_looping(metrics):
    push, published = metrics
    opened = []
    loop = spout_loop(NeverOpens, push,
                      running=lambda: len(loop.restart_tracker.records) < 6 or opened.append(1))
    loop.start_component()  # returns once "stopped"
    assert loop.hosted is None
    records = list(loop.restart_tracker.records)
    assert [r.delay_ms for r in records] == POLICY.sequence(6) == [10, 20, 40, 40, 40, 40]
    assert [r.crash_looping for r in records] == [False, False] + [True] * 4
    assert all(r.reason == "ConnectionError: no broker" and not r.progressed for r in records)
    last = published()[-1]
    assert last["__crash-looping"] == "1" and last["__last-error"] == "ConnectionError: no broker"


def test_progress_clears_the_crash_loop_and_resets_the_backoff(metrics):
    push, published = metrics
    OPENS.clear()
    loop = spout_loop(OpensOnTheFourthTry, push)
    loop.start_component()
    assert len(OPENS) == 4 and loop.restart_tracker.crash_looping
    assert [r.delay_ms for r in loop.restart_tracker.records] == [10, 20, 40]
    loop.active = True
    loop._burst(loop.hosted)  # emits 1 and 2, then raises after that progress
    records = list(loop.restart_tracker.records)
    assert records[-1].progressed and records[-1].delay_ms == 0
    assert not loop.restart_tracker.crash_looping and loop.hosted is not None
    loop.publish_metrics(force=True)
    assert published()[-1]["__crash-looping"] == "0"
