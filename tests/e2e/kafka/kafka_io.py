"""Writing test input to Kafka and reading a topology's output back, with confluent-kafka
directly (not through the connectors under test)."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

VOCABULARY = [f"w{i:02d}" for i in range(60)]


def sentences(count: int, seed: int) -> list[str]:
    """``count`` seeded sentences of 3 to 9 words."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(3, 9)))
            for _ in range(count)]


def word_counts(lines: Iterable[str]) -> Counter:
    return Counter(word for line in lines for word in line.split())


def produce(bootstrap: str, topic: str, values: list[str], *, partitions: int,
            first_key: int = 0) -> None:
    """Write ``values`` to ``topic``, round-robin over its partitions, and wait until the
    broker has every one."""
    from confluent_kafka import Producer

    failures: list[Any] = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                         "enable.idempotence": True})
    for n, value in enumerate(values):
        producer.produce(topic, value=value.encode("utf-8"), key=str(first_key + n).encode(),
                         partition=(first_key + n) % partitions,
                         on_delivery=lambda err, _msg: err and failures.append(err))
        producer.poll(0)
    assert producer.flush(30) == 0 and not failures, f"undelivered: {failures[:3]}"


def read_topic(bootstrap: str, topic: str, partitions: int, *, idle: float = 1.5,
               limit: float = 30.0) -> list[tuple[int, int, str | None, str]]:
    """Every record of ``topic`` now: (partition, offset, key, value), read until
    nothing new came for ``idle`` seconds."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.time()}",
                         "enable.auto.commit": False})
    out = []
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        deadline = time.monotonic() + limit
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < idle and time.monotonic() < deadline:
            for record in consumer.consume(1000, timeout=0.3):
                if record.error():
                    continue
                quiet_since = time.monotonic()
                key = record.key()
                out.append((record.partition(), record.offset(),
                            key.decode("utf-8") if key is not None else None,
                            record.value().decode("utf-8")))
    finally:
        consumer.close()
    return out


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offset per partition (partitions without one left out)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "enable.auto.commit": False})
    try:
        answer = consumer.committed([TopicPartition(topic, p) for p in range(partitions)],
                                    timeout=10)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in answer if tp.offset >= 0}
