"""The end of a bounded read (``heron.connectors.kafka.spout.finite``).

A Kafka topic has no end, so Storm's KafkaSpout never finishes. Tests, the conformance
suite and backfills want one (Flink's bounded KafkaSource, Spark's batch reads with
ending offsets): the spout reads its partitions to where they end *now* and is then
exhausted, so a run ends by itself once everything read is processed.

"Where a partition ends" is the high watermark the broker reports in its fetch
responses (librdkafka caches it per partition), compared with the consumer's fetch
position. Not ListOffsets: some Kafka-protocol brokers (Tansu) answer it wrongly, while
their fetch responses carry the right watermark. A partition nothing was fetched from
yet has no cached watermark and is not at its end.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["read_to_end"]


def read_to_end(consumer: Any, topic_partition: Callable[..., Any],
                assigned: Iterable[tuple[str, int]]) -> bool:
    """Whether the consumer's position in every assigned partition has reached the
    partition's high watermark (True for no partitions)."""
    assigned = list(assigned)
    if not assigned:
        return True
    positions = consumer.position([topic_partition(t, p) for t, p in assigned])
    for tp in positions:
        _, high = consumer.get_watermark_offsets(topic_partition(tp.topic, tp.partition),
                                                 cached=True)
        if high is None or high < 0:
            return False  # nothing fetched yet: the end is not known
        if high > 0 and (tp.offset is None or tp.offset < high):
            return False
    return True
