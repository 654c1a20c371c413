"""Kafka -> a running count per word in keyed state -> FileSink, effectively once.

Options: heron.connectors.kafka.bootstrap.servers, heron.connectors.kafka.spout.topics,
heron.connectors.file.sink.dir."""

from kafka_parts import SplitBolt, WordCountBolt
from streamparse import Grouping, Topology

from compat.connectors import FileSink
from compat.connectors.kafka import KafkaSpout


class ExactCounts(Topology):
    config = {"topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 0.5}

    sentences = KafkaSpout.spec(par=2)
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = WordCountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    sink = FileSink.spec(inputs={count: Grouping.fields("word")}, par=2)
