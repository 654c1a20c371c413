"""Consumer lag of Kafka spouts, read from the metrics they report.

A Kafka spout (``compat.connectors.kafka.KafkaSpout``) reports its positions with the
component API's ``report_metric``, under the names Storm's storm-kafka-client gives them
(``KafkaOffsetMetric``), so dashboards and habits built on Storm carry over; they reach
the engine as instance metrics prefixed ``user/``:

- ``user/kafkaOffset/<topic>/partition_<n>/spoutLag``: log end offset minus the spout's
  position (clamped at 0 by the spout), and beside it, when reported,
  ``latestEmittedOffset``, ``latestCompletedOffset`` (committed), ``earliestTimeOffset``
  and ``latestTimeOffset`` or ``logHeadOffset`` (the log end);
- ``user/kafkaOffset/<topic>/total<Figure>`` (Storm's per-topic sums) and
  ``user/kafkaOffset/total<Figure>`` (the spout's total, ``totalSpoutLag``).

Every surface that shows lag (``heron metrics``, the tracker's ``/topologies/sourcelag``,
the page's Kafka lag card, the Metrics Managers' Prometheus gauges) reads the names here,
so one rule decides what is a lag figure and the surfaces cannot disagree. Pure
functions over ``{metric: value text}``; nothing here knows where the figures came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

#: the instance metric prefix of every Kafka offset figure (user metric ``kafkaOffset/...``)
PREFIX = "user/kafkaOffset/"
#: Storm's per-partition figure names -> ours (``logHeadOffset``, the log end, is what
#: compat.connectors.kafka reports beside Storm's ``latestTimeOffset``; Storm's
#: ``recordsInPartition`` is exported to Prometheus, not shown in the rows)
PARTITION_FIGURES = {"spoutLag": "lag", "latestEmittedOffset": "emitted",
                     "latestCompletedOffset": "committed", "earliestTimeOffset": "earliest",
                     "latestTimeOffset": "end", "logHeadOffset": "end",
                     "recordsInPartition": "records"}
#: Storm's per-topic and per-spout sums (``total<Name>``) -> ours
TOTAL_FIGURES = {"SpoutLag": "lag", "LatestEmittedOffset": "emitted",
                 "LatestCompletedOffset": "committed", "EarliestTimeOffset": "earliest",
                 "LatestTimeOffset": "end", "RecordsInPartitions": "records"}
_TOPIC = r"[a-zA-Z0-9._-]+"
_PARTITION = re.compile(rf"({_TOPIC})/partition_(\d+)/({'|'.join(PARTITION_FIGURES)})")
_TOPIC_TOTAL = re.compile(rf"({_TOPIC})/total({'|'.join(TOTAL_FIGURES)})")
_TOTAL = re.compile(rf"total({'|'.join(TOTAL_FIGURES)})")


class LagMetric(NamedTuple):
    """What one metric name says: its figure (``lag``, ``emitted``, ``committed``,
    ``earliest``, ``end``, ``records``) and the topic and partition it is of (None for a
    sum over them)."""

    figure: str
    topic: str | None = None
    partition: int | None = None


def parse_name(metric: str) -> LagMetric | None:
    """The lag figure a metric name carries, None when it is not one."""
    if not metric.startswith(PREFIX):
        return None
    rest = metric[len(PREFIX):]
    if found := _PARTITION.fullmatch(rest):
        return LagMetric(PARTITION_FIGURES[found[3]], found[1], int(found[2]))
    if found := _TOPIC_TOTAL.fullmatch(rest):
        return LagMetric(TOTAL_FIGURES[found[2]], found[1])
    if found := _TOTAL.fullmatch(rest):
        return LagMetric(TOTAL_FIGURES[found[1]])
    return None


def _offset(text: str) -> int | None:
    """A figure as an integer; None when the text is not a finite number (offsets travel
    as text, ``"12"`` or ``"12.0"``)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return int(value) if value == value and abs(value) != float("inf") else None


@dataclass(frozen=True)
class PartitionLag:
    """One partition as one spout instance consumes it; None where not reported."""

    component: str
    instance: str
    topic: str
    partition: int
    lag: int | None = None
    emitted: int | None = None
    committed: int | None = None
    earliest: int | None = None
    end: int | None = None


@dataclass
class ComponentLag:
    """One spout component's lag summed over its partitions (or over its instances'
    ``totalSpoutLag`` where they report no partition)."""

    component: str
    lag: int = 0
    max_lag: int = 0
    partitions: int = 0
    topics: list[str] = field(default_factory=list)
    instances: int = 0


def reports_lag(values: Mapping[str, str]) -> bool:
    """Whether one instance's figures include any Kafka offset figure."""
    return any(name.startswith(PREFIX) and parse_name(name) is not None for name in values)


def instance_rows(component: str, instance: str,
                  values: Mapping[str, str]) -> list[PartitionLag]:
    """One instance's partitions, by topic then partition."""
    found: dict[tuple[str, int], dict[str, int | None]] = {}
    for name, text in values.items():
        parsed = parse_name(name) if name.startswith(PREFIX) else None
        if parsed is None or parsed.partition is None or parsed.topic is None:
            continue
        found.setdefault((parsed.topic, parsed.partition), {})[parsed.figure] = _offset(text)
    return [PartitionLag(component, instance, topic, partition, lag=f.get("lag"),
                         emitted=f.get("emitted"), committed=f.get("committed"),
                         earliest=f.get("earliest"), end=f.get("end"))
            for (topic, partition), f in sorted(found.items())]


def lag_rows(metrics: Iterable[tuple[str, str, Mapping[str, str]]]) -> list[PartitionLag]:
    """Every partition of every instance in ``(component, instance, values)`` triples,
    sorted by component, topic, partition and instance."""
    rows = [row for component, instance, values in metrics
            for row in instance_rows(component, instance, values)]
    return sorted(rows, key=lambda r: (r.component, r.topic, r.partition, r.instance))


def component_totals(metrics: Iterable[tuple[str, str, Mapping[str, str]]]
                     ) -> list[ComponentLag]:
    """Per component: lag summed over its partitions, the largest partition lag, how
    many partitions and which topics. An instance that reports only its
    ``totalSpoutLag`` counts with that total."""
    totals: dict[str, ComponentLag] = {}
    for component, instance, values in metrics:
        rows = instance_rows(component, instance, values)
        reported = _offset(values.get(PREFIX + "totalSpoutLag", ""))
        if not rows and reported is None:
            continue
        total = totals.setdefault(component, ComponentLag(component))
        total.instances += 1
        lags = [r.lag for r in rows if r.lag is not None]
        total.lag += sum(lags) if rows else reported or 0
        total.max_lag = max([total.max_lag, *lags])
        total.partitions += len(rows)
        total.topics = sorted(set(total.topics) | {r.topic for r in rows})
    return [totals[c] for c in sorted(totals)]
