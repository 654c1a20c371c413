"""Seeded word count reading its sentences from Kafka: KafkaSpout -> split -> count.

The runner writes the fixture to a fresh topic (conformance.kafka_input) and passes the
broker, the topic and a bounded read as options; the spout's translator turns each
record (the row's JSON) back into ``[sid, sentence]``."""

from compat.connectors.kafka import KafkaSpout
from compat.storm_api import Grouping, Topology

from catalogue_wordcount import CountWords, SplitSentence


class WordCountKafka(Topology):
    config = {"topology.acker.executors": 0}

    sentences = KafkaSpout.spec(par=2, config={
        "heron.connectors.kafka.consumer.properties": {"group.id": "conformance"},
        "heron.connectors.kafka.spout.value.deserializer": "json",
        "heron.connectors.kafka.spout.record.translator": "catalogue_wordcount:sentence_of_record",
        "heron.connectors.kafka.spout.output.fields": ["sid", "sentence"],
    })
    split = SplitSentence.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    count = CountWords.spec(inputs={split: Grouping.fields("word")}, par=2)
