"""What the Kafka connector tests share: writing records, reading committed offsets, and
hosting a KafkaSpout task in-process (compat.storm_api.testing) as task ``index`` of
``tasks`` of its component."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

from compat.connectors.kafka import KafkaSpout
from compat.storm_api.testing import SpoutHarness

PREFIX = "heron.connectors.kafka."


def produce(bootstrap: str, topic: str, records: Iterable[tuple[int, Any, Any]],
            one_batch_each: bool = False) -> int:
    """Write (partition, key, value) records; returns how many. ``one_batch_each``: one
    record per batch, for tests that look up the log end (Tansu's ListOffsets(latest)
    counts batches, not records: docs/kafka.md)."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 1})
    count = 0
    for partition, key, value in records:
        producer.produce(topic, key=key, value=value, partition=partition)
        count += 1
        if one_batch_each:
            assert producer.flush(20) == 0
    assert producer.flush(20) == 0
    return count


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offset per partition (-1001 when none)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        return {tp.partition: tp.offset for tp in consumer.committed(
            [TopicPartition(topic, p) for p in range(partitions)], timeout=10)}
    finally:
        consumer.close()


def read_all(bootstrap: str, topic: str, partitions: int, expect: int,
             timeout: float = 10.0, **props: Any) -> list[Any]:
    """Every record of ``topic`` (as (partition, offset, key, value)) once ``expect`` are
    there or ``timeout`` passed."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"r-{uuid.uuid4().hex}",
                         **props})
    consumer.assign([TopicPartition(topic, p, -2) for p in range(partitions)])
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and len(out) < expect:
            for m in consumer.consume(500, 0.2):
                if m.error() is None:
                    out.append((m.partition(), m.offset(), m.key(), m.value()))
        end = time.monotonic() + 0.3  # anything beyond what was expected
        while time.monotonic() < end:
            for m in consumer.consume(500, 0.1):
                if m.error() is None:
                    out.append((m.partition(), m.offset(), m.key(), m.value()))
    finally:
        consumer.close()
    return out


def spout_conf(bootstrap: str, topic: str | None, **settings: Any) -> dict[str, Any]:
    """A component conf: bootstrap, topic, and ``settings`` (``spout_x_y=`` for
    ``spout.x.y``; ``group`` for group.id), with a short start timeout."""
    conf: dict[str, Any] = {PREFIX + "bootstrap.servers": bootstrap,
                            PREFIX + "start.timeout.ms": 5000,
                            "storm.id": settings.pop("storm_id", "topo-1-100"),
                            "topology.name": "topo"}
    if topic is not None:
        conf[PREFIX + "spout.topics"] = topic
    group = settings.pop("group", None)
    props = dict(settings.pop("consumer_properties", {}))
    if group:
        props["group.id"] = group
    if props:
        conf[PREFIX + "consumer.properties"] = props
    for name, value in settings.items():
        if name.startswith(PREFIX) or "." in name or name.startswith("topology"):
            conf[name] = value
        else:
            conf[PREFIX + name.replace("_", ".")] = value
    return conf


def task_context(index: int, tasks: int, name: str = "spout") -> dict[str, Any]:
    """Storm's context for task ``index`` of ``tasks`` (task ids 1..tasks)."""
    fields = ["topic", "partition", "offset", "key", "value"]
    return {"taskid": index + 1, "componentid": name,
            "task->component": {"-1": "__system",
                                **{str(t): name for t in range(1, tasks + 1)}},
            "streams": ["default"], "stream->outputfields": {"default": fields},
            "stream->target->grouping": {}, "source->stream->grouping": {},
            "source->stream->fields": {}}


def host_spout(conf: dict[str, Any], index: int = 0, tasks: int = 1, state: Any = None,
               spout_cls: type = KafkaSpout) -> SpoutHarness:
    return SpoutHarness(spout_cls, conf=conf, context=task_context(index, tasks),
                        component_name="spout", task_id=index + 1, state=state)


def pull(harness: SpoutHarness, count: int, timeout: float = 10.0) -> list:
    """Call next_tuple until ``count`` more emits came (or ``timeout``); returns them."""
    start = len(harness.emits)
    deadline = time.monotonic() + timeout
    while len(harness.emits) - start < count and time.monotonic() < deadline:
        harness.next_tuple()
    return harness.emits[start:]


def idle(harness: SpoutHarness, seconds: float) -> list:
    """Call next_tuple for ``seconds``; returns what was emitted meanwhile."""
    start = len(harness.emits)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        harness.next_tuple()
    return harness.emits[start:]
