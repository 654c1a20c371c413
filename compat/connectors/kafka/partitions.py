"""Which partitions a spout task reads: Storm 2's manual round-robin assignment.

All partitions of the subscribed topics, sorted by (topic, partition), are dealt to the
spout's tasks in turn: task ``index`` of ``count`` takes positions ``index``,
``index + count``, ... (Storm's ``RoundRobinManualPartitioner``). Every task computes the
same answer from the same metadata, so no two read one partition and none is left out,
without a consumer-group rebalance (``consumer.assign``, never ``subscribe``).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["TopicPartitionKey", "round_robin", "discover"]

#: (topic, partition)
TopicPartitionKey = tuple[str, int]


def round_robin(partitions: Iterable[TopicPartitionKey], index: int,
                count: int) -> list[TopicPartitionKey]:
    """This task's share of ``partitions`` (task ``index`` of ``count``), sorted."""
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"task index {index} of {count} tasks")
    ordered = sorted(set(partitions))
    return ordered[index::count]


def discover(topics_metadata: dict[str, Any], topics: Iterable[str] = (),
             pattern: re.Pattern[str] | None = None) -> tuple[list[TopicPartitionKey], list[str]]:
    """The partitions of the subscribed topics in a metadata answer
    (``{topic: TopicMetadata}``, confluent-kafka's ``ClusterMetadata.topics``), and the
    named topics that do not exist. A pattern matches whole topic names (Java's
    ``Pattern.matcher(topic).matches()``, as Storm's ``PatternTopicFilter``), never the
    broker's internal ``__`` topics."""
    found: list[TopicPartitionKey] = []
    missing: list[str] = []
    if pattern is not None:
        names = [t for t in topics_metadata
                 if not t.startswith("__") and pattern.fullmatch(t)]
    else:
        names = list(topics)
    for topic in names:
        meta = topics_metadata.get(topic)
        if meta is None or getattr(meta, "error", None) is not None or not meta.partitions:
            if pattern is None:
                missing.append(topic)
            continue
        found.extend((topic, int(p)) for p in meta.partitions)
    return sorted(found), missing
