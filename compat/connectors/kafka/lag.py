"""Consumer lag as metrics, with Storm's names (``KafkaOffsetMetric``).

Per partition ``kafkaOffset/<topic>/partition_<n>/spoutLag`` (log end offset minus the
spout's position, never below 0), ``.../logHeadOffset`` and ``.../latestEmittedOffset``
(and ``.../latestCompletedOffset`` under AT_LEAST_ONCE: the committed offset); per topic
``kafkaOffset/<topic>/totalSpoutLag``; and ``kafkaOffset/totalSpoutLag`` over all. Reported
through ``report_metric`` they become ``user/...`` metrics in ``heron metrics``, the
tracker and Prometheus. The log end offset is the high watermark librdkafka saw in its
last fetch response; brokers whose watermark lags their log (Tansu) make lag approximate.
"""
from __future__ import annotations

from collections.abc import Iterable

__all__ = ["lag_metrics"]

#: (topic, partition, log end offset, position, committed offset or None)
PartitionReading = tuple[str, int, int, int, "int | None"]


def lag_metrics(readings: Iterable[PartitionReading]) -> dict[str, int]:
    """The metrics for these readings (partitions with an unknown end or position are
    left out by the caller)."""
    out: dict[str, int] = {}
    totals: dict[str, int] = {}
    for topic, partition, end, position, committed in readings:
        base = f"kafkaOffset/{topic}/partition_{partition}"
        lag = max(0, end - (committed if committed is not None else position))
        out[f"{base}/spoutLag"] = lag
        out[f"{base}/logHeadOffset"] = end
        out[f"{base}/latestEmittedOffset"] = position - 1
        if committed is not None:
            out[f"{base}/latestCompletedOffset"] = committed
        totals[topic] = totals.get(topic, 0) + lag
    for topic, lag in totals.items():
        out[f"kafkaOffset/{topic}/totalSpoutLag"] = lag
    out["kafkaOffset/totalSpoutLag"] = sum(totals.values())
    return out
