"""``heron metrics``'s Kafka lag table, from a canned Topology Master answer holding what
a Kafka spout reports (Storm's ``kafkaOffset/<topic>/partition_<n>/...`` user metrics):
one row per partition with its lag and offsets, a total per spout component, nothing for
topologies without Kafka, and ``--json`` carrying every figure as it came."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from engine.tools.cli import metrics_command
from engine.tools.cli.main import main

P = "user/kafkaOffset/"
ANSWER = {
    ("kafka", "container_1_kafka_1"): {
        "__emit-count": "95", P + "orders/partition_0/spoutLag": "5",
        P + "orders/partition_0/latestEmittedOffset": "1095",
        P + "orders/partition_0/latestCompletedOffset": "1090",
        P + "orders/partition_0/latestTimeOffset": "1100", P + "totalSpoutLag": "5"},
    ("kafka", "container_2_kafka_2"): {
        "__emit-count": "80", P + "orders/partition_1/spoutLag": "12000"},
    ("count", "container_1_count_3"): {"__execute-count": "175", "user/hits": "4"},
}


@pytest.fixture
def answer(monkeypatch):
    monkeypatch.setattr(metrics_command, "fetch", lambda *_args, **_kw: dict(ANSWER))


def cells(output: str, first: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("│")[1:-1]] for line in output.splitlines()
            if line.startswith("│") and line.split("│")[1].strip() == first]


def test_lag_per_partition_and_a_total_per_spout_follow_the_main_tables(answer):
    result = CliRunner().invoke(main, ["metrics", "wordcount"])
    assert result.exit_code == 0, result.output
    assert "Kafka lag" in result.output
    assert result.output.index("Kafka lag") > result.output.index("wordcount: metrics")
    lag_table = result.output[result.output.index("Kafka lag"):]
    assert cells(lag_table, "kafka") == [
        ["kafka", "container_1_kafka_1", "orders", "0", "5", "1,095", "1,090", "1,100"],
        ["kafka", "container_2_kafka_2", "orders", "1", "12,000", "-", "-", "-"],
        ["kafka", "total", "orders", "2 partitions", "12,005", "", "", ""]]


def test_the_spouts_own_metrics_show_its_lag_too(answer, monkeypatch):
    monkeypatch.setattr(metrics_command, "fetch", lambda *_args, **_kw: {
        k: v for k, v in ANSWER.items() if k[0] == "kafka"})
    result = CliRunner().invoke(main, ["metrics", "wordcount", "kafka"])
    assert result.exit_code == 0, result.output
    lag_table = result.output[result.output.index("Kafka lag"):]
    assert cells(lag_table, "kafka")[-1] == ["kafka", "total", "orders", "2 partitions",
                                             "12,005", "", "", ""]


def test_a_topology_without_kafka_has_no_lag_table(monkeypatch):
    monkeypatch.setattr(metrics_command, "fetch", lambda *_args, **_kw: {
        ("count", "container_1_count_3"): ANSWER[("count", "container_1_count_3")]})
    result = CliRunner().invoke(main, ["metrics", "wordcount"])
    assert result.exit_code == 0 and "Kafka lag" not in result.output


def test_json_carries_every_kafka_figure_as_reported(answer):
    result = CliRunner().invoke(main, ["metrics", "wordcount", "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["kafka/container_1_kafka_1"] == ANSWER[("kafka", "container_1_kafka_1")]
    assert shown["kafka/container_2_kafka_2"][P + "orders/partition_1/spoutLag"] == "12000"
