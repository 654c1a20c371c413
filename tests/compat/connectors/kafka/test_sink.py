"""KafkaSink against a real broker: Storm's KafkaBolt mapping and topic selection, acks on
delivery and fails on errors, the flush before a checkpoint, and the transactional mode's
commit written once however often it is repeated."""

from __future__ import annotations

import time

from compat.connectors.kafka import KafkaSink
from compat.storm_api.config import RELIABILITY_MODE_KEY
from compat.storm_api.testing import BoltHarness
from tests.compat.connectors.helpers import checkpoint
from tests.compat.connectors.kafka.kafka_helpers import PREFIX, read_all
from tests.kafka_broker import KafkaServer


def sink_conf(bootstrap, topic=None, **extra):
    conf = {PREFIX + "bootstrap.servers": bootstrap, PREFIX + "start.timeout.ms": 5000,
            "topology.name": "topo", "storm.id": "topo-1-100"}
    if topic:
        conf[PREFIX + "sink.topic"] = topic
    conf.update({(k if "." in k else PREFIX + k.replace("_", ".")): v for k, v in extra.items()})
    return conf


def host_sink(conf, fields=("key", "message"), state=None):
    return BoltHarness(KafkaSink, conf=conf, sources={"spout": list(fields)},
                       component_name="sink", state=state)


def settle(sink, seconds=5.0, until=None):
    """Tick until ``until()`` holds (delivery callbacks run in poll, on ticks)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not until():
        sink.tick()
        time.sleep(0.02)


def test_acks_each_tuple_once_its_record_is_delivered(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    sink = host_sink(sink_conf(kafka_broker.bootstrap, topic))
    try:
        tups = [sink.process([f"k{i}", f"v{i}"]) for i in range(5)]
        settle(sink, until=lambda: len([a for a in sink.acked if a in {t.id for t in tups}]) == 5)
        assert [a for a in sink.acked if a in {t.id for t in tups}] == [t.id for t in tups]
        assert sink.failed == []
        got = read_all(kafka_broker.bootstrap, topic, 1, 5)
        assert [(k, v) for _, _, k, v in got] == [(f"k{i}".encode(), f"v{i}".encode())
                                                  for i in range(5)]
    finally:
        sink.close()


def test_no_key_field_gives_a_null_key_and_a_topic_field_picks_the_topic(kafka_broker,
                                                                       kafka_topic):
    default, chosen = kafka_topic(1), kafka_topic(1)
    conf = sink_conf(kafka_broker.bootstrap, default, sink_topic_field="dest")
    sink = host_sink(conf, fields=("dest", "message"))
    try:
        a = sink.process([chosen, "to chosen"])
        b = sink.process([None, "to default"])
        settle(sink, until=lambda: {a.id, b.id} <= set(sink.acked))
        assert read_all(kafka_broker.bootstrap, chosen, 1, 1)[0][2:] == (None, b"to chosen")
        assert read_all(kafka_broker.bootstrap, default, 1, 1)[0][2:] == (None, b"to default")
    finally:
        sink.close()


def test_a_record_the_producer_refuses_fails_its_tuple(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    sink = host_sink(sink_conf(kafka_broker.bootstrap, topic))
    try:
        big = sink.process(["k", "x" * 2_000_000])  # over message.max.bytes (1 MB)
        ok = sink.process(["k", "small"])
        settle(sink, until=lambda: ok.id in sink.acked)
        assert sink.failed == [big.id] and big.id not in sink.acked
    finally:
        sink.close()


def test_a_delivery_error_fails_the_tuple(kafka_topic):
    """A broker gone mid-run: the record times out (message.timeout.ms) and its tuple
    fails, so the spout replays it."""
    with KafkaServer() as broker:
        broker.create_topic("out", 1)
        conf = sink_conf(broker.bootstrap, "out",
                         **{PREFIX + "producer.properties": {"message.timeout.ms": 1000}})
        sink = host_sink(conf)
        try:
            broker.stop()
            tup = sink.process(["k", "lost"])
            settle(sink, seconds=8, until=lambda: tup.id in sink.failed)
            assert sink.failed == [tup.id] and tup.id not in sink.acked
        finally:
            sink.close()


def test_effectively_once_flushes_before_the_checkpoint(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    conf = sink_conf(kafka_broker.bootstrap, topic, **{RELIABILITY_MODE_KEY: "EFFECTIVELY_ONCE"})
    sink = host_sink(conf)
    try:
        for i in range(20):
            sink.process([None, str(i)])
        sink.component.pre_save("ckpt-1")  # returns only once all 20 are in Kafka
        got = read_all(kafka_broker.bootstrap, topic, 1, 20, timeout=2)
        assert [v for *_, v in got] == [str(i).encode() for i in range(20)]
    finally:
        sink.close()


def test_transactional_commit_writes_once_however_often_repeated(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    conf = sink_conf(kafka_broker.bootstrap, topic, sink_transactional=True,
                     **{RELIABILITY_MODE_KEY: "EFFECTIVELY_ONCE"})
    sink = host_sink(conf)
    try:
        for i in range(5):
            sink.process([None, f"a{i}"])
        state = checkpoint(sink.component, "ckpt-1")  # prepared, kept in state
        assert read_all(kafka_broker.bootstrap, topic, 1, 1, timeout=0.5) == []
        sink.component.post_save("ckpt-1")  # the checkpoint is consistent: commit
        sink.component.commit("ckpt-1", state["__two_phase_commit_pending__"]["ckpt-1"])
    finally:
        sink.close()
    # a restore from ckpt-1 (taken before the commit) commits it again: nothing is written
    restored = host_sink(conf, state=state)
    try:
        restored.process([None, "b0"])
        checkpoint(restored.component, "ckpt-2")
        restored.component.post_save("ckpt-2")
    finally:
        restored.close()
    got = read_all(kafka_broker.bootstrap, topic, 1, 6, **{"isolation.level": "read_committed"})
    assert [v for *_, v in got] == [b"a0", b"a1", b"a2", b"a3", b"a4", b"b0"]
