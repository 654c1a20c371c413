"""Kafka in, a running count per word, Kafka out, written the streamparse way.

    KafkaSpout (topic ``sentences``, its partitions shared by the spout's tasks)
      -> SplitBolt (one tuple per word)
      -> WordCountBolt (a running count per word, fields-grouped by word)
      -> KafkaSink (topic ``word-counts``: key the word, value its count)

Start a broker with the example's topics and the text loaded (foreground; Ctrl-C stops it,
and its memory storage forgets everything):

    python3 examples/kafka_wordcount/broker.py serve

then, in another terminal, run the topology for 30 seconds and read the counts back:

    heron run examples/kafka_wordcount -t 30
    python3 examples/kafka_wordcount/broker.py counts

By default the spout is Storm's at-least-once KafkaSpout (offsets committed up to the
lowest un-acked tuple). Effectively once, with the counts in checkpointed state and one
Kafka transaction per checkpoint:

    heron run examples/kafka_wordcount -t 30 -o topology.reliability.mode=EFFECTIVELY_ONCE \\
        -o heron.connectors.kafka.sink.transactional=true

The broker's address is config.json's ``heron.connectors.kafka.bootstrap.servers``; the
same topology as a Flux file is ``kafka_wordcount.yaml`` beside this project
(docs/flux.md). Settings: docs/kafka.md.
"""

from bolts.words import SplitBolt, WordCountBolt
from streamparse import Grouping, Topology

from compat.connectors.kafka import KafkaSink, KafkaSpout


class KafkaWordCount(Topology):
    sentences = KafkaSpout.spec(par=2, config={
        "heron.connectors.kafka.spout.topics": "sentences",
        "heron.connectors.kafka.consumer.properties": {"group.id": "kafka-wordcount"},
    })
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = WordCountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    sink = KafkaSink.spec(inputs=[count], config={
        "heron.connectors.kafka.sink.topic": "word-counts",
        "heron.connectors.kafka.sink.key.field": "word",
        "heron.connectors.kafka.sink.message.field": "count",
    })
