"""A Kafka spout's offsets (Storm's ``kafkaOffset/<topic>/partition_<n>/...`` user
metrics) in a Metrics Manager's Prometheus exposition: labelled gauges with ``topic`` and
``partition`` (``heron_kafka_spout_lag``, ``..._end_offset`` ...), not one metric name per
topic and partition; other user metrics keep their names."""

from __future__ import annotations

from prometheus_client.core import CollectorRegistry
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from engine.metricsmgr.prometheus import LatestMetricsCollector

P = "user/kafkaOffset/"
SPOUT = {
    P + "orders.eu-1/partition_0/spoutLag": "5",
    P + "orders.eu-1/partition_0/latestTimeOffset": "100",
    P + "orders.eu-1/partition_0/latestEmittedOffset": "96",
    P + "orders.eu-1/partition_0/latestCompletedOffset": "95",
    P + "orders.eu-1/partition_0/earliestTimeOffset": "0",
    P + "orders.eu-1/partition_7/spoutLag": "1200",
    P + "orders.eu-1/partition_7/logHeadOffset": "1300",
    P + "orders.eu-1/totalSpoutLag": "1205",
    P + "totalSpoutLag": "1205",
    "user/hits": "3",
    "__emit-count": "96",
}


def exposition(*snapshot: tuple[str, str, dict[str, str]]) -> tuple[str, dict]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LatestMetricsCollector("wc", 1, lambda: iter(snapshot)))
    text = generate_latest(registry).decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        assert family.type == "gauge", family.name
        for s in family.samples:
            samples[(s.name, tuple(sorted((k, v) for k, v in s.labels.items()
                                          if k in ("topic", "partition"))))] = (s.value, s.labels)
    return text, samples


def test_partition_figures_are_gauges_labelled_by_topic_and_partition():
    text, samples = exposition(("kafka", "container_1_kafka_1", SPOUT))
    t = ("topic", "orders.eu-1")
    value, labels = samples[("heron_kafka_spout_lag", (("partition", "0"), t))]
    assert value == 5 and labels == {"topology": "wc", "component": "kafka",
                                     "instance": "container_1_kafka_1", "container": "1",
                                     "topic": "orders.eu-1", "partition": "0"}
    assert samples[("heron_kafka_spout_lag", (("partition", "7"), t))][0] == 1200
    for name, expected in (("end_offset", 100), ("emitted_offset", 96), ("committed_offset", 95),
                           ("earliest_offset", 0)):
        assert samples[(f"heron_kafka_spout_{name}", (("partition", "0"), t))][0] == expected
    # the connector's logHeadOffset is the log end too
    assert samples[("heron_kafka_spout_end_offset", (("partition", "7"), t))][0] == 1300
    assert samples[("heron_kafka_spout_topic_lag", (t,))][0] == 1205
    assert samples[("heron_kafka_spout_total_lag", ())][0] == 1205
    # no name carries a topic or partition any more; other metrics are as they were
    names = [line.split("{")[0] for line in text.splitlines() if not line.startswith("#")]
    assert not [n for n in names if "kafkaoffset" in n.lower() or "orders" in n], names
    assert samples[("heron_user_hits", ())][0] == 3 and samples[("heron_emit_count", ())][0] == 96


def test_two_spout_instances_share_one_family():
    _, samples = exposition(("kafka", "i1", {P + "t/partition_0/spoutLag": "1"}),
                            ("kafka", "i2", {P + "t/partition_1/spoutLag": "2"}))
    assert {k: v[0] for k, v in samples.items()} == {
        ("heron_kafka_spout_lag", (("partition", "0"), ("topic", "t"))): 1,
        ("heron_kafka_spout_lag", (("partition", "1"), ("topic", "t"))): 2}


def test_both_names_of_the_log_end_make_one_series():
    text, samples = exposition(("kafka", "i1", {P + "t/partition_0/latestTimeOffset": "9",
                                                P + "t/partition_0/logHeadOffset": "9"}))
    assert [line for line in text.splitlines() if not line.startswith("#")] == [
        'heron_kafka_spout_end_offset{component="kafka",container="1",instance="i1",'
        'partition="0",topic="t",topology="wc"} 9.0']
