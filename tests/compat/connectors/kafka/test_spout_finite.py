"""``heron.connectors.kafka.spout.finite``: a bounded read ends once the spout's
partitions are read to their end and, at least once, every tuple is acked and its offset
committed; records written after that are not read."""

from __future__ import annotations

import time

from tests.compat.connectors.kafka.kafka_helpers import (
    committed,
    host_spout,
    idle,
    produce,
    spout_conf,
)


def drain(harness, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not harness.component.is_exhausted() and time.monotonic() < deadline:
        harness.next_tuple()


def test_a_finite_spout_is_exhausted_only_after_acks_and_the_final_commit(kafka_broker,
                                                                          kafka_topic):
    topic = kafka_topic(3)
    produce(kafka_broker.bootstrap, topic, [(i % 3, None, str(i)) for i in range(30)])
    conf = spout_conf(kafka_broker.bootstrap, topic, group="finite-alo", spout_finite=True,
                      spout_offset_commit_period_ms=60_000)  # only the final commit
    spout = host_spout(conf)
    try:
        emits = idle(spout, 1.0)
        assert len(emits) == 30
        assert not spout.component.is_exhausted()  # read to the end, but nothing acked
        for emit in emits[1:]:
            spout.ack(emit.tup_id)
        idle(spout, 0.5)
        assert not spout.component.is_exhausted()  # one tuple still in flight
        spout.ack(emits[0].tup_id)
        drain(spout)
        assert spout.component.is_exhausted()
        assert committed(kafka_broker.bootstrap, "finite-alo", topic, 3) == {0: 10, 1: 10, 2: 10}
        produce(kafka_broker.bootstrap, topic, [(0, None, "late")])
        assert idle(spout, 0.5) == []  # the end was where the partitions ended
    finally:
        spout.close()


def test_without_finite_the_spout_never_ends(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    produce(kafka_broker.bootstrap, topic, [(0, None, "x")])
    spout = host_spout(spout_conf(kafka_broker.bootstrap, topic, group="infinite"))
    try:
        for emit in idle(spout, 1.0):
            spout.ack(emit.tup_id)
        idle(spout, 0.5)
        assert not spout.component.is_exhausted()
    finally:
        spout.close()


def test_a_finite_spout_with_no_partitions_ends_at_once(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    conf = spout_conf(kafka_broker.bootstrap, topic, group="finite-none", spout_finite=True)
    spare = host_spout(conf, index=1, tasks=2)  # task 1 of 2 over one partition: none
    try:
        drain(spare, 3.0)
        assert spare.component.is_exhausted()
    finally:
        spare.close()
