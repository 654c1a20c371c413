"""Ticks, batching bolts and Storm's fatal acking cases on the storm engine."""

from __future__ import annotations

import pytest

from compat.storm_api import BatchingBolt, Bolt, TicklessBatchingBolt, Topology
from tests.engine.storm.engine_topologies import NumberSpout as Numbers
from tests.engine.storm.engine_topologies import TrackedNumberSpout as TrackedNumbers
from tests.engine.storm.engine_topologies import run_topology as run

pytestmark = pytest.mark.timeout(60)


def test_ticks_arrive_at_the_configured_frequency_as_system_tuples():
    class TickCounter(Bolt):
        outputs = ["kind", "freq"]

        def process(self, tup):
            pass

        def process_tick(self, tup):
            self.emit([f"{tup.component}/{tup.stream}/{tup.task}", tup.values[0]])

    class Endless(Numbers):
        def is_exhausted(self):
            return False

    class T(Topology):
        nums = Endless.spec()
        ticks = TickCounter.spec(inputs=[nums], config={"topology.tick.tuple.freq.secs": 0.2})

    result = run(T, {"test.limit": 0}, time_limit=1.1)
    tuples = result.capture.streams[("ticks", "default")].tuples
    assert 3 <= len(tuples) <= 6
    assert {tuple(t) for t in tuples} == {("__system/__tick/-1", 0.2)}


def test_batching_bolt_flushes_on_ticks_anchored_to_the_whole_batch():
    class Summer(BatchingBolt):
        outputs = ["size", "total"]

        def process_batch(self, key, tups):
            self.emit([len(tups), sum(t.values.n for t in tups)])

    class T(Topology):
        nums = TrackedNumbers.spec()
        summer = Summer.spec(inputs=[nums], config={"topology.tick.tuple.freq.secs": 0.1})

    result = run(T, {"test.limit": 50})
    assert result.reason == "finished"
    batches = result.capture.streams[("summer", "default")].tuples
    assert sum(size for size, _ in batches) == 50
    assert sum(total for _, total in batches) == sum(range(50))
    # every spout tuple was acked only after its batch was processed
    assert result.components["nums"].acked == 50


def test_a_failing_batch_fails_every_tuple_in_it_and_the_spout_replays():
    class FailOnce(BatchingBolt):
        outputs = ["size", "total"]
        failed_once = False  # on the class: the task is restarted with a fresh instance

        def process_batch(self, key, tups):
            if not FailOnce.failed_once:
                FailOnce.failed_once = True
                raise RuntimeError("first batch fails")
            self.emit([len(tups), sum(t.values.n for t in tups)])

    class T(Topology):
        nums = TrackedNumbers.spec()
        summer = FailOnce.spec(inputs=[nums], config={"topology.tick.tuple.freq.secs": 0.1})

    failures = []
    result = run(T, {"test.limit": 10}, failures=failures)
    assert result.reason == "finished"
    assert any("first batch fails" in line for line in failures)
    assert result.components["nums"].failed >= 1
    assert result.components["nums"].acked == 10


def test_tickless_batching_bolt_flushes_on_its_own_timer():
    class Summer(TicklessBatchingBolt):
        outputs = ["size", "total"]
        secs_between_batches = 0.1

        def process_batch(self, key, tups):
            self.emit([len(tups), sum(t.values.n for t in tups)])

    class T(Topology):
        nums = TrackedNumbers.spec()
        summer = Summer.spec(inputs=[nums])

    result = run(T, {"test.limit": 30})
    assert result.reason == "finished"
    batches = result.capture.streams[("summer", "default")].tuples
    assert sum(total for _, total in batches) == sum(range(30))


def test_double_ack_is_a_named_fatal_error():
    class DoubleAck(Bolt):
        outputs = ["n"]

        def process(self, tup):
            self.ack(tup)  # auto_ack is on: this is Storm's double ack

    class T(Topology):
        nums = TrackedNumbers.spec()
        bolt = DoubleAck.spec(inputs=[nums])

    failures = []
    run(T, {"test.limit": 1, "topology.message.timeout.secs": 1}, time_limit=3,
        failures=failures)
    assert failures
    assert "'bolt'" in failures[0] and "acked tuple id" in failures[0]
    assert "already acked/failed" in failures[0]


def test_anchoring_to_a_failed_tuple_is_a_named_fatal_error():
    class AnchorAfterFail(Bolt):
        outputs = ["n"]
        auto_ack = False
        auto_fail = False

        def process(self, tup):
            self.fail(tup)
            self.emit([tup.values.n], anchors=[tup])

    class T(Topology):
        nums = TrackedNumbers.spec()
        bolt = AnchorAfterFail.spec(inputs=[nums])

    failures = []
    run(T, {"test.limit": 1, "topology.message.timeout.secs": 1}, time_limit=3,
        failures=failures)
    assert failures and "anchored an emit" in failures[0]
    assert "after ack/fail" in failures[0]
