"""Kafka -> split -> count -> Kafka, effectively-once (bench/kafka.py).

The same components as ``kafka_bench``; the spout's positions and the counts live in
checkpointed state (the Topology Master checkpoints every
``topology.stateful.checkpoint.interval.seconds``, 1 s here) and acking is off. The bench
turns ``heron.connectors.kafka.sink.transactional`` on or off: on, each checkpoint
interval's records are written in one fenced Kafka transaction once the checkpoint is
consistent; off, the sink flushes before each checkpoint (at-least-once output).
"""

from kafkabench.parts import BenchKafkaSpout, CountBolt, SplitBolt

from compat.connectors.kafka import KafkaSink
from compat.storm_api import Grouping, Topology


class KafkaBenchStateful(Topology):
    config = {"topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 1}
    spout = BenchKafkaSpout.spec(par=2)
    split = SplitBolt.spec(inputs=[spout], par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    sink = KafkaSink.spec(inputs={count: Grouping.fields("word")}, par=2)
