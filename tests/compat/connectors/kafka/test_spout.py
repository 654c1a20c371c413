"""KafkaSpout against a real broker (the session's Tansu): partitions split over tasks,
Storm's FirstPollOffsetStrategy, AT_LEAST_ONCE commits and retries, the bound on
uncommitted offsets, the other guarantees, lag metrics and records that do not decode."""

from __future__ import annotations

import time

import pytest

from compat.connectors.kafka import KafkaSpout
from tests.compat.connectors.kafka.kafka_helpers import (
    committed,
    host_spout,
    idle,
    produce,
    pull,
    spout_conf,
)


def values_of(emits):
    return [e.values for e in emits]


def test_tasks_split_partitions_with_no_overlap(kafka_broker, kafka_topic):
    topic = kafka_topic(5)
    produce(kafka_broker.bootstrap, topic, [(p, None, f"{p}-{i}") for p in range(5)
                                            for i in range(4)])
    conf = spout_conf(kafka_broker.bootstrap, topic, group="split")
    tasks = [host_spout(conf, index=i, tasks=3) for i in range(3)]
    try:
        deadline = time.monotonic() + 10
        while sum(len(t.emits) for t in tasks) < 20 and time.monotonic() < deadline:
            for t in tasks:
                t.next_tuple()
        for t in tasks:
            idle(t, 0.2)
        seen = [{(e.values[1], e.values[2]) for e in t.emits} for t in tasks]
        partitions = [sorted({p for p, _ in s}) for s in seen]
        assert partitions == [[0, 3], [1, 4], [2]]  # round robin over sorted partitions
        assert sum(len(s) for s in seen) == 20 and len(set().union(*seen)) == 20
    finally:
        for t in tasks:
            t.close()


def test_default_translator_fields_and_message_id(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    produce(kafka_broker.bootstrap, topic, [(0, b"k", b"hello")])
    spout = host_spout(spout_conf(kafka_broker.bootstrap, topic, group="fields"))
    try:
        [emit] = pull(spout, 1)
        assert KafkaSpout.outputs == ["topic", "partition", "offset", "key", "value"]
        assert emit.values == [topic, 0, 0, "k", "hello"]
        assert emit.tup_id == (topic, 0, 0)
        # the id survives the engines' serializers: a list handed back acks the same tuple
        spout.ack(list(emit.tup_id))
        assert spout.component._managers[(topic, 0)].next_commit_offset() == 1
    finally:
        spout.close()


def test_at_least_once_commits_stop_at_the_lowest_unacked_offset(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    produce(kafka_broker.bootstrap, topic, [(0, None, str(i)) for i in range(10)])
    conf = spout_conf(kafka_broker.bootstrap, topic, group="alo-commit",
                      spout_offset_commit_period_ms=50)
    spout = host_spout(conf)
    try:
        emits = pull(spout, 10)
        assert [e.values[2] for e in emits] == list(range(10))
        for e in emits:
            if e.values[2] != 4:
                spout.ack(e.tup_id)
        idle(spout, 0.5)
        assert committed(kafka_broker.bootstrap, "alo-commit", topic, 1) == {0: 4}
        spout.ack(emits[4].tup_id)
        idle(spout, 0.5)
        assert committed(kafka_broker.bootstrap, "alo-commit", topic, 1) == {0: 10}
    finally:
        spout.close()


def test_a_failed_tuple_is_emitted_again_after_its_backoff(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    produce(kafka_broker.bootstrap, topic, [(0, None, str(i)) for i in range(5)])
    conf = spout_conf(kafka_broker.bootstrap, topic, group="alo-retry",
                      spout_retry_initial_delay_ms=300)
    spout = host_spout(conf)
    try:
        emits = pull(spout, 5)
        for e in emits:
            (spout.fail if e.values[2] == 2 else spout.ack)(e.tup_id)
        assert idle(spout, 0.15) == []  # still backing off
        again = pull(spout, 1, timeout=5)
        assert [(e.values[2], e.tup_id) for e in again] == [(2, (topic, 0, 2))]
        assert idle(spout, 0.3) == []  # the acked ones are not emitted again
    finally:
        spout.close()


def test_max_retries_acks_the_tuple_so_commits_move_on(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    produce(kafka_broker.bootstrap, topic, [(0, None, "x")])
    conf = spout_conf(kafka_broker.bootstrap, topic, group="alo-give-up",
                      spout_retry_max_retries=1, spout_offset_commit_period_ms=50)
    spout = host_spout(conf)
    try:
        [first] = pull(spout, 1)
        spout.fail(first.tup_id)
        [second] = pull(spout, 1)
        spout.fail(second.tup_id)  # the second failure is beyond max.retries=1
        assert idle(spout, 0.4) == []
        assert committed(kafka_broker.bootstrap, "alo-give-up", topic, 1) == {0: 1}
    finally:
        spout.close()


def test_max_uncommitted_offsets_stops_polling_a_partition(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    for batch in range(4):  # four batches: a fetch returns whole batches
        produce(kafka_broker.bootstrap, topic, [(0, None, str(i)) for i in
                                                range(batch * 10, batch * 10 + 10)])
    conf = spout_conf(kafka_broker.bootstrap, topic, group="alo-bound",
                      spout_max_uncommitted_offsets=10, spout_offset_commit_period_ms=50,
                      consumer_properties={"max.partition.fetch.bytes": 100})
    spout = host_spout(conf)
    try:
        first = pull(spout, 40, timeout=1)
        assert [e.values[2] for e in first] == list(range(10))  # 10 in flight, then no more
        assert idle(spout, 0.3) == []
        emits = list(first)
        deadline = time.monotonic() + 10
        while len(emits) < 40 and time.monotonic() < deadline:
            for e in emits:
                spout.ack(e.tup_id)  # acks of tuples acked already are ignored
            emits += idle(spout, 0.1)
        assert sorted(e.values[2] for e in emits) == list(range(40))
    finally:
        spout.close()


@pytest.mark.parametrize("guarantee", ["AT_MOST_ONCE", "NO_GUARANTEE"])
def test_other_guarantees_emit_without_ids_and_commit_the_position(kafka_broker, kafka_topic,
                                                                   guarantee):
    topic = kafka_topic(1)
    produce(kafka_broker.bootstrap, topic, [(0, None, str(i)) for i in range(6)])
    group = f"g-{guarantee}"
    conf = spout_conf(kafka_broker.bootstrap, topic, group=group,
                      spout_processing_guarantee=guarantee, spout_offset_commit_period_ms=50)
    spout = host_spout(conf)
    try:
        emits = pull(spout, 6)
        assert [e.tup_id for e in emits] == [None] * 6
        if guarantee == "AT_MOST_ONCE":  # committed before they were emitted
            assert committed(kafka_broker.bootstrap, group, topic, 1) == {0: 6}
        idle(spout, 0.3)
        assert committed(kafka_broker.bootstrap, group, topic, 1) == {0: 6}
    finally:
        spout.close()


def _restart_reads(bootstrap, topic, strategy, group, storm_id="topo-1-100"):
    spout = host_spout(spout_conf(bootstrap, topic, group=group, storm_id=storm_id,
                                  spout_first_poll_offset_strategy=strategy))
    try:
        return [e.values[4] for e in idle(spout, 0.8)]
    finally:
        spout.close()


@pytest.mark.parametrize("strategy, expected", [
    ("EARLIEST", ["0", "1", "2", "3", "4", "5"]),      # deployment: the beginning
    ("LATEST", ["5"]),                                 # deployment: only what comes later
    ("UNCOMMITTED_EARLIEST", ["3", "4", "5"]),         # the committed offset
    ("UNCOMMITTED_LATEST", ["3", "4", "5"]),
])
def test_first_poll_offset_strategy_with_a_foreign_commit(kafka_broker, kafka_topic, strategy,
                                                          expected):
    """The group has a commit (offset 3) made by another topology: EARLIEST/LATEST ignore
    it (they apply at deployment), the UNCOMMITTED_ ones resume from it."""
    topic = kafka_topic(1)
    group = f"fp-{strategy}"
    produce(kafka_broker.bootstrap, topic, [(0, None, str(i)) for i in range(5)],
            one_batch_each=True)
    from confluent_kafka import Consumer, TopicPartition
    other = Consumer({"bootstrap.servers": kafka_broker.bootstrap, "group.id": group})
    other.commit(offsets=[TopicPartition(topic, 0, 3)], asynchronous=False)
    other.close()
    spout = host_spout(spout_conf(kafka_broker.bootstrap, topic, group=group,
                                  spout_first_poll_offset_strategy=strategy))
    try:
        got = [e.values[4] for e in idle(spout, 0.8)]
        produce(kafka_broker.bootstrap, topic, [(0, None, "5")])
        got += [e.values[4] for e in pull(spout, 1, timeout=5)]
        assert got == expected
    finally:
        spout.close()


@pytest.mark.parametrize("strategy", ["UNCOMMITTED_EARLIEST", "UNCOMMITTED_LATEST"])
def test_uncommitted_strategies_without_a_commit(kafka_broker, kafka_topic, strategy):
    topic = kafka_topic(1)
    produce(kafka_broker.bootstrap, topic, [(0, None, str(i)) for i in range(3)],
            one_batch_each=True)
    got = _restart_reads(kafka_broker.bootstrap, topic, strategy, f"none-{strategy}")
    assert got == (["0", "1", "2"] if strategy == "UNCOMMITTED_EARLIEST" else [])


def test_lag_metrics_per_partition_and_total(kafka_broker, kafka_topic):
    topic = kafka_topic(2)
    produce(kafka_broker.bootstrap, topic, [(p, None, str(i)) for p in range(2)
                                            for i in range(5)])
    spout = host_spout(spout_conf(kafka_broker.bootstrap, topic, group="lag"))
    try:
        emits = pull(spout, 10)
        for e in emits:
            if e.values[1] == 0:
                spout.ack(e.tup_id)
        metrics = spout.component.report_lag()
        # nothing is committed yet: the lag is counted from the committed offset (0)
        assert metrics[f"kafkaOffset/{topic}/partition_0/spoutLag"] == 5
        assert metrics[f"kafkaOffset/{topic}/partition_0/logHeadOffset"] == 5
        assert metrics[f"kafkaOffset/{topic}/partition_1/latestEmittedOffset"] == 4
        assert metrics["kafkaOffset/totalSpoutLag"] == 10
        spout.component._commit_acked()
        idle(spout, 0.3)
        metrics = spout.component.report_lag()
        assert metrics[f"kafkaOffset/{topic}/partition_0/spoutLag"] == 0
        assert metrics[f"kafkaOffset/{topic}/totalSpoutLag"] == 5
        reported = dict(spout.metrics)
        assert reported["kafkaOffset/totalSpoutLag"] == 5
    finally:
        spout.close()


def test_an_undecodable_record_is_counted_logged_and_skipped(kafka_broker, kafka_topic, caplog):
    topic = kafka_topic(1)
    produce(kafka_broker.bootstrap, topic, [(0, None, b'{"n": 1}'), (0, None, b"\xff{oops"),
                                            (0, None, b'{"n": 3}')])
    conf = spout_conf(kafka_broker.bootstrap, topic, group="poison",
                      spout_value_deserializer="json", spout_offset_commit_period_ms=50)
    spout = host_spout(conf)
    try:
        emits = pull(spout, 2)
        assert [e.values[4] for e in emits] == [{"n": 1}, {"n": 3}]
        assert spout.component.undecodable == 1
        assert ("kafkaSpout/undecodableRecords", 1) in spout.metrics
        lines = [r.getMessage() for r in caplog.records if "cannot be decoded" in r.getMessage()]
        assert len(lines) == 1 and f"{topic}/0@1" in lines[0]
        for e in emits:
            spout.ack(e.tup_id)
        idle(spout, 0.3)  # the poison record does not hold the commit back
        assert committed(kafka_broker.bootstrap, "poison", topic, 1) == {0: 3}
    finally:
        spout.close()


def translate_upper(record):
    """A user translator: one field, None (skip) for empty values."""
    return [record.value.upper()] if record.value else None


def test_a_user_translator_and_its_output_fields(kafka_broker, kafka_topic):
    topic = kafka_topic(1)
    produce(kafka_broker.bootstrap, topic, [(0, None, "a"), (0, None, ""), (0, None, "b")])
    translator = f"{__name__}:translate_upper"
    conf = spout_conf(kafka_broker.bootstrap, topic, group="translator",
                      spout_record_translator=translator, spout_output_fields=["word"])
    spec = KafkaSpout.spec(name="words", config={k: v for k, v in conf.items()})
    assert {name: info.output_fields for name, info in spec.outputs.items()} == {
        "default": ["word"]}
    spout = host_spout(conf)
    try:
        assert [e.values for e in pull(spout, 2)] == [["A"], ["B"]]
    finally:
        spout.close()
