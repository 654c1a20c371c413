"""Fixtures through Kafka: a case's input written to a topic, read by the topology's
KafkaSpout on every engine.

A case that names spouts in ``kafka_spouts`` reads those spouts' fixtures from Kafka
instead of from the file: before the case's runs, each such fixture is written to a
fresh topic (one record per row, the row's JSON as the value, the row's position as
the key, spread round-robin over the topic's partitions), and every engine's run gets
the options that point its spout at the topic from the first offset and end the spout
at the topic's end (``heron.connectors.kafka.spout.finite``). Both engines read the same
records, so the comparison is of the engines, not of two loads.

The broker is the suite's (``heron-conformance run --kafka HOST:PORT``); without one
the case is skipped, naming the option.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["KafkaInputError", "kafka_options", "load_topic"]

#: partitions of each fixture topic: more than one, so the spout's tasks share them and
#: the engines' reading order across partitions may differ (the comparisons are of
#: multisets)
PARTITIONS = 3
TIMEOUT_SECS = 30.0


class KafkaInputError(RuntimeError):
    """The broker refused or did not answer while a fixture was loaded (names it)."""


def load_topic(bootstrap: str, rows: Sequence[Sequence[Any]], *, prefix: str,
               partitions: int = PARTITIONS) -> str:
    """Create a fresh topic on ``bootstrap`` and write ``rows`` to it; returns its name."""
    try:
        from confluent_kafka import KafkaException, Producer
        from confluent_kafka.admin import AdminClient, NewTopic
    except ImportError:
        raise KafkaInputError("Kafka cases need confluent-kafka: "
                              "pip install 'heron-storm-compat[kafka]'") from None
    topic = f"{prefix}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        admin.create_topics([NewTopic(topic, num_partitions=partitions,
                                      replication_factor=1)])[topic].result(TIMEOUT_SECS)
    except KafkaException as exc:
        raise KafkaInputError(f"creating topic {topic} on {bootstrap} failed: "
                              f"{exc.args[0] if exc.args else exc}") from None
    failures: list[str] = []

    def delivered(error: Any, _record: Any) -> None:
        if error is not None:
            failures.append(str(error))

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                         "enable.idempotence": True})
    for position, row in enumerate(rows):
        producer.produce(topic, value=json.dumps(list(row)).encode("utf-8"),
                         key=str(position).encode(), partition=position % partitions,
                         on_delivery=delivered)
        producer.poll(0)
    left = producer.flush(TIMEOUT_SECS)
    if left or failures:
        raise KafkaInputError(f"writing the fixture to topic {topic} on {bootstrap}: "
                              f"{left} record(s) undelivered"
                              + (f", {len(failures)} failed ({failures[0]})" if failures else ""))
    return topic


def kafka_options(bootstrap: str, topics: Mapping[str, str]) -> dict[str, Any]:
    """The ``-o`` options that point a case's Kafka spout at its topic. Topology options,
    so a spout declared without its own topic (the catalogue's) reads them; one Kafka
    spout per case for that reason."""
    if len(topics) != 1:
        raise KafkaInputError(f"a Kafka case reads one spout from Kafka, not {len(topics)}")
    (topic,) = topics.values()
    return {"heron.connectors.kafka.bootstrap.servers": bootstrap,
            "heron.connectors.kafka.spout.topics": topic,
            "heron.connectors.kafka.spout.first.poll.offset.strategy": "EARLIEST",
            "heron.connectors.kafka.spout.finite": True}
