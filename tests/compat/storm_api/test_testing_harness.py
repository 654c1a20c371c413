"""The unit-test harness, on our classes and on unchanged streamparse classes."""
from __future__ import annotations

import doctest
import logging

import pytest
import streamparse
from streamparse import Stream

from compat.storm_api import bolt as our_bolt
from compat.storm_api import spout as our_spout
from compat.storm_api import testing
from compat.storm_api.exceptions import ComponentFailure
from compat.storm_api.testing import (
    BoltHarness,
    Emit,
    LogEntry,
    Metric,
    SpoutHarness,
    build_context,
)

FLAVOURS = {"ours": (our_bolt, our_spout), "streamparse": (streamparse, streamparse)}


@pytest.fixture(params=list(FLAVOURS))
def make(request):
    bolts, spouts = FLAVOURS[request.param]

    def make(body, name):
        return type(body.__name__, (body, getattr(bolts, name, None) or getattr(spouts, name)), {})

    return make


def test_module_docstring_example_runs():
    assert doctest.testmod(testing).failed == 0


class WordCountBody:
    outputs = ["word", "count"]

    def initialize(self, conf, ctx):
        self.counts = {}

    def process(self, tup):
        word = tup.values.word
        if word == "boom":
            raise ValueError("cannot count boom")
        self.counts[word] = self.counts.get(word, 0) + 1
        self.emit([word, self.counts[word]])
        self.logger.info("counted %s", word)
        self.report_metric("words", 1)

    def process_tick(self, tup):
        self.log(f"tick {tup.values[0]}", "debug")


def test_bolt_harness_records_emits_acks_logs_and_metrics(make):
    harness = BoltHarness(make(WordCountBody, "Bolt"), sources={"words": ["word"]},
                          conf={"topology.tick.tuple.freq.secs": 10})
    first = harness.process(["dog"])
    harness.process(["dog"], id="x-2")
    tick = harness.tick()
    harness.heartbeat()
    assert harness.emits == [Emit(["dog", 1], "default", [first.id], None, None),
                             Emit(["dog", 2], "default", ["x-2"], None, None)]
    assert harness.values() == [["dog", 1], ["dog", 2]]
    assert harness.acked == [first.id, "x-2", tick.id]
    assert harness.logs == [LogEntry("tick 10", 1)]
    assert harness.metrics == [Metric("words", 1)] * 2
    assert [r.getMessage() for r in harness.records] == ["counted dog", "counted dog"]
    assert (
        first.component == "words"
        and first.task == 2
        and type(first.values).__name__ == "WordsDefaultTuple"
    )


class OwnTickBody(WordCountBody):
    """A bolt that redefines what a tick is (pystorm asks ``is_tick`` of every tuple)."""

    @staticmethod
    def is_tick(tup):
        return tup.stream == "__tick" or tup.values[0] == "tock"


def test_a_bolt_redefining_is_tick_is_asked_about_every_tuple(make):
    harness = BoltHarness(make(OwnTickBody, "Bolt"), sources={"words": ["word"]})
    tock = harness.process(["tock"])
    harness.process(["dog"])
    assert harness.logs == [LogEntry("tick tock", 1)]
    assert harness.values() == [["dog", 1]]
    assert harness.acked[0] == tock.id


def test_bolt_harness_surfaces_user_exceptions_after_auto_fail(make):
    harness = BoltHarness(make(WordCountBody, "Bolt"), sources={"words": ["word"]})
    with pytest.raises(ComponentFailure) as failure:
        harness.process(["boom"], id="b")
    assert isinstance(failure.value.original, ValueError)
    assert harness.failed == ["b"] and harness.errors[0].startswith(
        "Python ValueError raised while processing"
    )


def test_bolt_harness_context_describes_sources_and_outputs():
    context = build_context("counter", 4, outputs=["a", Stream(fields=["e"], name="errors")],
                            sources={"words": ["word"], "other": {"s1": ["x"], "s2": ["y"]}})
    assert context["componentid"] == "counter" and context["taskid"] == 4
    assert context["task->component"] == {
        "-1": "__system",
        "4": "counter",
        "5": "words",
        "6": "other",
    }
    assert context["stream->outputfields"] == {"default": ["a"], "errors": ["e"]}
    assert context["source->stream->fields"]["other"] == {"s1": ["x"], "s2": ["y"]}


def test_bolt_harness_asks_for_a_source_when_several_are_declared(make):
    harness = BoltHarness(make(WordCountBody, "Bolt"), sources={"a": ["word"], "b": ["word"]})
    with pytest.raises(ValueError, match="pass source="):
        harness.process(["dog"])
    assert harness.process(["dog"], source="b").component == "b"


class BatchBody:
    ticks_between_batches = 1
    secs_between_batches = 60

    def group_key(self, tup):
        return tup.values[0][0]

    def process_batch(self, key, tups):
        self.emit([key, len(tups)])


def test_batching_bolt_harness_flushes_on_the_second_tick(make):
    harness = BoltHarness(make(BatchBody, "BatchingBolt"))
    a1, a2, b1 = (
        harness.process(["apple"]),
        harness.process(["avocado"]),
        harness.process(["banana"]),
    )
    harness.tick()
    assert harness.emits == []
    harness.tick()
    assert harness.emits == [Emit(["a", 2], "default", [a1.id, a2.id], None, None),
                             Emit(["b", 1], "default", [b1.id], None, None)]


def test_flush_processes_pending_batches_of_a_tickless_bolt(make):
    with BoltHarness(make(BatchBody, "TicklessBatchingBolt")) as harness:
        harness.process(["cherry"])
        harness.flush()
        assert harness.values() == [["c", 1]] and len(harness.acked) == 1


def test_need_task_ids_answer_is_configurable(make):
    class Asking:
        def process(self, tup):
            self.emit([repr(self.emit(tup.values, need_task_ids=True))], stream="ids")

    harness = BoltHarness(make(Asking, "Bolt"), task_ids=lambda values, stream: [len(values)])
    harness.process(["a", "b"])
    assert harness.values("ids") == [["[2]"]]
    default = BoltHarness(make(Asking, "Bolt"))
    default.process(["a"])
    assert default.values("ids") == [["[]"]]


class CountBody:
    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.n = 0
        self.active = None

    def next_tuple(self):
        if self.n < 3:
            self.n += 1
            self.emit([self.n], tup_id=f"id{self.n}")

    def is_exhausted(self):
        return self.n >= 3

    def activate(self):
        self.active = True

    def deactivate(self):
        self.active = False


def test_spout_harness_drives_commands_and_drains_finite_spouts(make):
    harness = SpoutHarness(make(CountBody, "Spout"))
    assert harness.next_tuple() == [Emit([1], "default", None, None, "id1")]
    harness.deactivate()
    assert harness.component.active is False
    harness.activate()
    assert [e.tup_id for e in harness.drain()] == ["id2", "id3"]
    assert harness.is_exhausted() and harness.next_tuple(n=2) == []


def test_reliable_spout_harness_replays_failures(make):
    harness = SpoutHarness(make(CountBody, "ReliableSpout"))
    harness.next_tuple()
    harness.clear()
    for _ in range(4):
        harness.fail("id1")
    assert [e.values for e in harness.emits] == [[1]] * 3
    assert harness.component.unacked_tuples == {}
    assert any("exceeded retry limit" in r.getMessage() for r in harness.records)


def test_harness_logger_propagates_for_caplog(make, caplog):
    with caplog.at_level(logging.INFO):
        BoltHarness(make(WordCountBody, "Bolt"), sources={"words": ["word"]}).process(["cat"])
    assert "counted cat" in caplog.text


def test_harness_close_stops_tickless_thread(make):
    harness = BoltHarness(make(BatchBody, "TicklessBatchingBolt"))
    harness.close()
    assert not harness.component._batcher.is_alive()
