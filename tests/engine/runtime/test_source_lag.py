"""The Kafka lag figures a spout reports under Storm's KafkaOffsetMetric names
(``user/kafkaOffset/<topic>/partition_<n>/spoutLag`` ...), recognised and grouped into
one row per partition and one total per component (engine/common/runtime/source_lag.py)."""

from __future__ import annotations

import pytest

from engine.common.runtime.source_lag import (
    ComponentLag,
    LagMetric,
    PartitionLag,
    component_totals,
    lag_rows,
    parse_name,
    reports_lag,
)

P = "user/kafkaOffset/"


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        (P + "orders/partition_0/spoutLag", LagMetric("lag", "orders", 0)),
        (
            P + "orders.v2-eu_1/partition_12/latestEmittedOffset",
            LagMetric("emitted", "orders.v2-eu_1", 12),
        ),
        (P + "t/partition_3/latestCompletedOffset", LagMetric("committed", "t", 3)),
        (P + "t/partition_3/earliestTimeOffset", LagMetric("earliest", "t", 3)),
        (P + "t/partition_3/latestTimeOffset", LagMetric("end", "t", 3)),
        (P + "t/partition_3/logHeadOffset", LagMetric("end", "t", 3)),
        (P + "t/partition_3/recordsInPartition", LagMetric("records", "t", 3)),
        (P + "t/totalSpoutLag", LagMetric("lag", "t")),
        (P + "t/totalRecordsInPartitions", LagMetric("records", "t")),
        (P + "totalSpoutLag", LagMetric("lag")),
        # a topic may be named like a figure: the partition segment decides
        (P + "totalSpoutLag/partition_1/spoutLag", LagMetric("lag", "totalSpoutLag", 1)),
    ],
)
def test_storms_kafka_offset_names_are_recognised(name, parsed):
    assert parse_name(name) == parsed


@pytest.mark.parametrize("name", [
    "user/hits", "__emit-count", "kafkaOffset/t/partition_0/spoutLag",   # not a user metric
    P + "t/partition_x/spoutLag", P + "t/partition_0/somethingElse", P + "t/partition_0",
    P + "a/b/partition_0/spoutLag", P + "t p/partition_0/spoutLag", P + "t/totalNothing",
    "user/kafkaOffsetX/t/partition_0/spoutLag",
])
def test_other_names_are_not_lag(name):
    assert parse_name(name) is None


SPOUT_1 = {
    P + "orders/partition_0/spoutLag": "5",
    P + "orders/partition_0/latestEmittedOffset": "95",
    P + "orders/partition_0/latestCompletedOffset": "90.0",
    P + "orders/partition_0/latestTimeOffset": "100",
    P + "orders/partition_2/spoutLag": "0",
    P + "totalSpoutLag": "5",
    "__emit-count": "95",
    "user/hits": "3",
}
SPOUT_2 = {
    P + "orders/partition_1/spoutLag": "40",
    P + "orders/partition_1/latestTimeOffset": "nan",
    P + "clicks/partition_0/spoutLag": "7",
    P + "clicks/partition_0/logHeadOffset": "70",
    P + "clicks/partition_0/recordsInPartition": "70",
}
METRICS = [("kafka", "container_1_kafka_2", SPOUT_2), ("kafka", "container_1_kafka_1", SPOUT_1),
           ("count", "container_1_count_3", {"__execute-count": "9"})]


def test_an_instances_figures_group_into_one_row_per_partition():
    assert lag_rows(METRICS) == [
        PartitionLag("kafka", "container_1_kafka_2", "clicks", 0, lag=7, end=70),
        PartitionLag("kafka", "container_1_kafka_1", "orders", 0, lag=5, emitted=95,
                     committed=90, end=100),
        PartitionLag("kafka", "container_1_kafka_2", "orders", 1, lag=40),  # nan: not reported
        PartitionLag("kafka", "container_1_kafka_1", "orders", 2, lag=0)]


def test_each_component_totals_its_partitions():
    assert component_totals(METRICS) == [ComponentLag(
        "kafka", lag=52, max_lag=40, partitions=4, topics=["clicks", "orders"], instances=2)]


def test_an_instance_with_only_its_total_counts_with_it():
    only_total = [("kafka", "i1", {P + "totalSpoutLag": "12"}), ("kafka", "i2", SPOUT_2)]
    assert lag_rows(only_total[:1]) == []
    (total,) = component_totals(only_total)
    assert (total.lag, total.partitions, total.instances) == (59, 2, 2)


def test_topologies_without_kafka_have_no_rows():
    plain = [("count", "i", {"__execute-count": "9", "user/hits": "2"})]
    assert lag_rows(plain) == [] and component_totals(plain) == []
    assert not reports_lag(plain[0][2]) and reports_lag(SPOUT_2)
