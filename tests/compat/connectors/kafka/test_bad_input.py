"""What the Kafka connectors do with bad input: an unreachable broker or a missing topic
fails the task at start in one line naming the key, address or topic; a pattern waits for
topics to appear; a broker that stops answering for 15 s (SIGSTOP) loses nothing."""

from __future__ import annotations

import os
import signal
import time

import pytest

from compat.connectors.kafka import KafkaSink, KafkaTopicError, KafkaUnreachableError
from compat.storm_api.exceptions import ComponentFailure
from compat.storm_api.testing import BoltHarness
from tests.compat.connectors.kafka.kafka_helpers import (
    PREFIX,
    committed,
    host_spout,
    idle,
    produce,
    pull,
    spout_conf,
)
from tests.kafka_broker import KafkaServer
from tests.local_server import free_port


def test_an_unreachable_broker_fails_the_task_at_start_in_one_line():
    address = f"127.0.0.1:{free_port()}"
    conf = spout_conf(address, "words", **{PREFIX + "start.timeout.ms": 500})
    with pytest.raises(ComponentFailure) as failure:
        host_spout(conf)
    error = failure.value.original
    assert isinstance(error, KafkaUnreachableError)
    message = str(error)
    assert "\n" not in message
    assert f"heron.connectors.kafka.bootstrap.servers='{address}'" in message
    with pytest.raises(ComponentFailure) as failure:
        BoltHarness(KafkaSink, conf={**conf, PREFIX + "sink.topic": "out"},
                    sources={"spout": ["key", "message"]})
    assert isinstance(failure.value.original, KafkaUnreachableError)


def test_a_missing_topic_fails_the_task_at_start_naming_it(kafka_broker):
    conf = spout_conf(kafka_broker.bootstrap, "no-such-topic")
    with pytest.raises(ComponentFailure) as failure:
        host_spout(conf)
    error = failure.value.original
    assert isinstance(error, KafkaTopicError)
    assert "'no-such-topic'" in str(error) and "heron.connectors.kafka.spout.topics" in str(error)


def test_a_pattern_waits_for_matching_topics(kafka_broker):
    prefix = f"late-{os.getpid()}-{time.monotonic_ns()}"
    conf = spout_conf(kafka_broker.bootstrap, None, group="pattern",
                      spout_topic_pattern=f"{prefix}-.*",
                      spout_partition_refresh_period_ms=100)
    spout = host_spout(conf)
    try:
        assert idle(spout, 0.3) == []
        topic = kafka_broker.create_topic(f"{prefix}-a", 2)
        produce(kafka_broker.bootstrap, topic, [(0, None, "x"), (1, None, "y")])
        assert sorted(e.values[4] for e in pull(spout, 2)) == ["x", "y"]
    finally:
        spout.close()


@pytest.mark.slow
def test_a_broker_stopped_for_15_seconds_loses_nothing():
    """SIGSTOP the broker mid-run: next_tuple keeps returning promptly, records written
    meanwhile (queued by their producer) and those before arrive once each after SIGCONT,
    and the commits catch up."""
    from confluent_kafka import Producer

    with KafkaServer() as broker:
        topic = broker.create_topic("words", 2)
        produce(broker.bootstrap, topic, [(i % 2, None, f"before-{i}") for i in range(10)])
        conf = spout_conf(broker.bootstrap, topic, group="stopped",
                          spout_offset_commit_period_ms=200)
        spout = host_spout(conf)
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 1})
        try:
            emits = pull(spout, 10)
            for e in emits:
                spout.ack(e.tup_id)
            os.kill(broker.pid, signal.SIGSTOP)
            try:
                for i in range(10):
                    producer.produce(topic, value=f"during-{i}", partition=i % 2)
                slowest, deadline = 0.0, time.monotonic() + 15
                while time.monotonic() < deadline:
                    started = time.monotonic()
                    emits += spout.next_tuple()
                    producer.poll(0)
                    slowest = max(slowest, time.monotonic() - started)
                assert slowest < 2.0
            finally:
                os.kill(broker.pid, signal.SIGCONT)
            assert producer.flush(30) == 0
            deadline = time.monotonic() + 30
            while len(emits) < 20 and time.monotonic() < deadline:
                for e in spout.next_tuple():
                    spout.ack(e.tup_id)
                    emits.append(e)
            values = sorted(e.values[4] for e in emits)
            assert values == sorted([f"before-{i}" for i in range(10)]
                                    + [f"during-{i}" for i in range(10)])
            deadline = time.monotonic() + 20
            while (committed(broker.bootstrap, "stopped", topic, 2) != {0: 10, 1: 10}
                   and time.monotonic() < deadline):
                idle(spout, 0.3)
            assert committed(broker.bootstrap, "stopped", topic, 2) == {0: 10, 1: 10}
        finally:
            spout.close()
