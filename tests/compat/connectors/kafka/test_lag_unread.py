"""KafkaSpout.report_lag counts a partition it has not read from yet: everything from
where the partition starts to its end is lag (the bench saw a spout with two partitions
report a third of its input as lag only because it was reading the other one first)."""

from __future__ import annotations

from collections import namedtuple

from compat.connectors.kafka import KafkaSpout
from compat.connectors.kafka.offsets import OffsetManager
from compat.connectors.kafka.positions import BEGINNING, END

TP = namedtuple("TP", "topic partition")


class Watermarks:
    """What librdkafka has cached from fetch responses: (low, high) per partition."""

    def __init__(self, marks):
        self.marks = marks

    def get_watermark_offsets(self, tp, cached=False):
        return self.marks[(tp.topic, tp.partition)]


class CK:
    TopicPartition = TP


def spout_reading(positions, starts, marks, managers=None):
    spout = KafkaSpout.__new__(KafkaSpout)
    spout._ck = CK
    spout._consumer = Watermarks(marks)
    spout._assigned = sorted(marks)
    spout._positions = positions
    spout._starts_at = starts
    spout._managers = managers or {}
    spout.undecodable = 0
    spout.report_metric = lambda name, value: None
    return spout


def test_unread_partitions_count_from_their_start_to_their_end():
    spout = spout_reading(positions={("t", 0): 40},
                          starts={("t", 0): BEGINNING, ("t", 1): BEGINNING, ("t", 2): END,
                                  ("t", 3): 7},
                          marks={("t", 0): (0, 50), ("t", 1): (10, 60), ("t", 2): (0, 30),
                                 ("t", 3): (0, 20)})
    lag = spout.report_lag()
    assert lag["kafkaOffset/t/partition_0/spoutLag"] == 10   # read to 40 of 50
    assert lag["kafkaOffset/t/partition_1/spoutLag"] == 50   # from its low watermark
    assert lag["kafkaOffset/t/partition_2/spoutLag"] == 0    # LATEST: starts at the end
    assert lag["kafkaOffset/t/partition_3/spoutLag"] == 13   # from a committed offset
    assert lag["kafkaOffset/totalSpoutLag"] == 73


def test_a_partition_nothing_was_fetched_from_is_left_out():
    spout = spout_reading(positions={}, starts={("t", 0): BEGINNING},
                          marks={("t", 0): (-1001, -1001)},
                          managers={("t", 0): OffsetManager(None)})
    assert "kafkaOffset/t/partition_0/spoutLag" not in spout.report_lag()
