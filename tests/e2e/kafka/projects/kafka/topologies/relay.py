"""Kafka -> a relay that fails some tuples once -> KafkaSink, at least once (Storm's
KafkaSpout and KafkaBolt with acking).

Options: heron.connectors.kafka.bootstrap.servers, heron.connectors.kafka.spout.topics,
heron.connectors.kafka.sink.topic, heron.connectors.kafka.consumer.properties."""

from kafka_parts import RelayBolt
from streamparse import Topology

from compat.connectors.kafka import KafkaSink, KafkaSpout


class Relay(Topology):
    config = {"topology.acker.executors": 1, "topology.max.spout.pending": 500,
              "topology.message.timeout.secs": 30}

    records = KafkaSpout.spec(par=2, config={
        "heron.connectors.kafka.spout.offset.commit.period.ms": 500})
    relay = RelayBolt.spec(inputs=[records], par=2)
    sink = KafkaSink.spec(inputs=[relay], par=2)
