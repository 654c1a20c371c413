"""Kafka -> split -> count -> Kafka, at-least-once (bench/kafka.py).

Storm's KafkaSpout semantics: every record emitted with its (topic, partition, offset) id,
offsets committed up to the lowest un-acked one; the split and count bolts anchor and ack
(streamparse's auto-anchor and auto-ack); the sink acks a tuple once the broker confirmed
its record. The bench sets ``topology.max.spout.pending``, the topics and the broker.
The sink is fields-grouped on the word so that one sink task writes all of a word's
counts, in order: the word's newest record is then its final count.
"""

from kafkabench.parts import BenchKafkaSpout, CountBolt, SplitBolt

from compat.connectors.kafka import KafkaSink
from compat.storm_api import Grouping, Topology


class KafkaBench(Topology):
    config = {"topology.acker.executors": 1}
    spout = BenchKafkaSpout.spec(par=2)
    split = SplitBolt.spec(inputs=[spout], par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    sink = KafkaSink.spec(inputs={count: Grouping.fields("word")}, par=2)
