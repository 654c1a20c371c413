"""Storm's KafkaSpout/KafkaBolt and their config classes become the native connectors'
settings (the contract's heron.connectors.kafka.* keys)."""

from __future__ import annotations

import importlib

import pytest

from compat.flux import FluxError, read_flux

from .conftest import SHELL_BOLT

P = "heron.connectors.kafka."
SPOUT = "org.apache.storm.kafka.spout."
BOLT = "org.apache.storm.kafka.bolt."


def _kafka_topology(builder_extra: str = "", bolt_extra: str = "") -> str:
    return f"""
name: "kafka-topology"
components:
  - id: "translator"
    className: "{SPOUT}DefaultRecordTranslator"
  - id: "spoutConfigBuilder"
    className: "{SPOUT}KafkaSpoutConfig$Builder"
    constructorArgs:
      - "localhost:9092"
      - ["sentences", "more"]
    properties:
      - name: "firstPollOffsetStrategy"
        value: EARLIEST
      - name: "recordTranslator"
        ref: "translator"
    configMethods:
      - name: "setProp"
        args:
          - {{"key.deserializer": "org.apache.kafka.common.serialization.StringDeserializer",
             "value.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer"}}
      - name: "setProp"
        args: ["group.id", "wordcount"]
      - name: "setProcessingGuarantee"
        args: ["AT_MOST_ONCE"]
      - name: "setOffsetCommitPeriodMs"
        args: [10000]
      - name: "setMaxUncommittedOffsets"
        args: [500]
      - name: "setRetry"
        args: [ref: "retry"]
{builder_extra}
  - id: "retry"
    className: "{SPOUT}KafkaSpoutRetryExponentialBackoff"
    constructorArgs: [ref: "zero", ref: "twoMs", 5, ref: "tenSecs"]
  - id: "zero"
    className: "{SPOUT}KafkaSpoutRetryExponentialBackoff$TimeInterval"
    constructorArgs: [0, "SECONDS"]
  - id: "twoMs"
    className: "{SPOUT}KafkaSpoutRetryExponentialBackoff$TimeInterval"
    factory: "milliSeconds"
    factoryArgs: [2]
  - id: "tenSecs"
    className: "{SPOUT}KafkaSpoutRetryExponentialBackoff$TimeInterval"
    factory: "seconds"
    factoryArgs: [10]
  - id: "spoutConfig"
    className: "{SPOUT}KafkaSpoutConfig"
    constructorArgs:
      - ref: "spoutConfigBuilder"
  - id: "producerProps"
    className: "java.util.Properties"
    configMethods:
      - name: "put"
        args: ["bootstrap.servers", "localhost:9092"]
      - name: "put"
        args: ["acks", "1"]
      - name: "put"
        args: ["key.serializer", "org.apache.kafka.common.serialization.StringSerializer"]
      - name: "put"
        args: ["value.serializer", "org.apache.kafka.common.serialization.StringSerializer"]
  - id: "topicSelector"
    className: "{BOLT}selector.DefaultTopicSelector"
    constructorArgs: ["counts"]
  - id: "mapper"
    className: "{BOLT}mapper.FieldNameBasedTupleToKafkaMapper"
    constructorArgs: ["word", "count"]
spouts:
  - id: "kafka-spout"
    className: "{SPOUT}KafkaSpout"
    constructorArgs:
      - ref: "spoutConfig"
    parallelism: 3
bolts:
  - id: "count"
    className: "{SHELL_BOLT}"
    constructorArgs: [["python3", "count.py"], ["word", "count"]]
  - id: "kafka-bolt"
    className: "{BOLT}KafkaBolt"
    configMethods:
      - name: "withProducerProperties"
        args: [ref: "producerProps"]
      - name: "withTopicSelector"
        args: [ref: "topicSelector"]
      - name: "withTupleToKafkaMapper"
        args: [ref: "mapper"]
      - name: "setFireAndForget"
        args: [true]
{bolt_extra}
streams:
  - {{from: "kafka-spout", to: "count", grouping: {{type: FIELDS, args: ["value"]}}}}
  - {{from: "count", to: "kafka-bolt", grouping: {{type: SHUFFLE}}}}
"""


def test_kafka_spout_and_bolt_become_the_connectors_settings(flux_file):
    flux = read_flux(flux_file(_kafka_topology()))
    spout = flux.spouts[0]
    assert (spout.kind, spout.class_path, spout.parallelism) == (
        "kafka_spout", "compat.connectors.kafka:KafkaSpout", 3)
    assert spout.outputs == {"default": ["topic", "partition", "offset", "key", "value"]}
    assert spout.settings == {
        P + "bootstrap.servers": "localhost:9092",
        P + "spout.topics": ["sentences", "more"],
        P + "spout.first.poll.offset.strategy": "EARLIEST",
        P + "spout.record.translator": "default",
        P + "spout.key.deserializer": "string",
        P + "spout.value.deserializer": "bytes",
        P + "spout.processing.guarantee": "AT_MOST_ONCE",
        P + "spout.offset.commit.period.ms": 10000,
        P + "spout.max.uncommitted.offsets": 500,
        P + "spout.retry.initial.delay.ms": 0,
        P + "spout.retry.delay.period.ms": 2,
        P + "spout.retry.max.delay.ms": 10000,
        P + "spout.retry.max.retries": 5,
        P + "consumer.properties": {"group.id": "wordcount"},
    }
    sink = flux.bolts[1]
    assert (sink.kind, sink.class_path, sink.outputs) == (
        "kafka_sink", "compat.connectors.kafka:KafkaSink", {})
    assert sink.settings == {
        P + "bootstrap.servers": "localhost:9092",
        P + "producer.properties": {"acks": "1"},
        P + "sink.topic": "counts",
        P + "sink.key.field": "word",
        P + "sink.message.field": "count",
        P + "sink.fire.and.forget": True,
        P + "sink.key.serializer": "string",
        P + "sink.value.serializer": "string",
    }


def test_static_builder_factory_and_field_topic_selector(flux_file):
    flux = read_flux(flux_file(f"""
        components:
          - id: "config"
            className: "{SPOUT}KafkaSpoutConfig"
            factory: "builder"
            factoryArgs: ["broker:9092", "words"]
          - id: "pattern"
            className: "java.util.regex.Pattern"
            factory: "compile"
            factoryArgs: ["logs-.*"]
          - id: "byPattern"
            className: "{SPOUT}KafkaSpoutConfig$Builder"
            constructorArgs: ["broker:9092", ref: "pattern"]
          - id: "props"
            className: "java.util.Properties"
            configMethods:
              - {{name: "setProperty", args: ["bootstrap.servers", "broker:9092"]}}
          - id: "selector"
            className: "{BOLT}selector.FieldNameTopicSelector"
            constructorArgs: ["topic", "fallback"]
        spouts:
          - id: "words"
            className: "{SPOUT}KafkaSpout"
            constructorArgs: [ref: "config"]
          - id: "logs"
            className: "{SPOUT}KafkaSpout"
            constructorArgs: [ref: "byPattern"]
        bolts:
          - id: "out"
            className: "{BOLT}KafkaBolt"
            configMethods:
              - {{name: "withProducerProperties", args: [ref: "props"]}}
              - {{name: "withTopicSelector", args: [ref: "selector"]}}
        streams:
          - {{from: "words", to: "out", grouping: {{type: SHUFFLE}}}}
        """))
    assert flux.spouts[0].settings == {
        P + "bootstrap.servers": "broker:9092", P + "spout.topics": ["words"],
        P + "spout.key.deserializer": "string", P + "spout.value.deserializer": "string"}
    assert flux.spouts[1].settings == {P + "bootstrap.servers": "broker:9092",
                                       P + "spout.topic.pattern": "logs-.*"}
    assert flux.bolts[0].settings == {
        P + "bootstrap.servers": "broker:9092", P + "producer.properties": {},
        P + "sink.topic": "fallback", P + "sink.topic.field": "topic"}


@pytest.mark.parametrize("extra, message", [
    ('      - {name: "setFirstPollOffsetStrategy", args: ["NEWEST"]}',
     r"setFirstPollOffsetStrategy: 'NEWEST' is not one of EARLIEST, LATEST"),
    ('      - {name: "setTupleListener", args: [1]}',
     r"'spoutConfigBuilder': KafkaSpoutConfig\$Builder method 'setTupleListener' has no "
     "equivalent here"),
    ('      - {name: "setProp", args: ["enable.auto.commit", true]}',
     "enable.auto.commit cannot be set"),
    ('      - {name: "setProp", args: ["value.deserializer", "com.acme.AvroDeserializer"]}',
     "value.deserializer com.acme.AvroDeserializer is a Java class that cannot run here"),
])
def test_builder_mistakes_name_their_line(flux_file, extra, message):
    path = flux_file(_kafka_topology(builder_extra=extra))
    with pytest.raises(FluxError, match=rf"^{path}:30: .*{message}"):
        read_flux(path)


def test_a_java_translator_and_a_map_for_producer_properties_are_refused(flux_file):
    path = flux_file(_kafka_topology().replace(f"{SPOUT}DefaultRecordTranslator",
                                               "org.apache.storm.flux.examples.OnlyValueRecordTranslator"))
    with pytest.raises(
        FluxError,
        match=rf"^{path}:3: component 'translator': Java class "
        r"org\.apache\.storm\.flux\.examples\.OnlyValueRecordTranslator "
        "cannot run",
    ):
        read_flux(path)
    path = flux_file(_kafka_topology().replace('args: [ref: "producerProps"]',
                                               'args: [{"bootstrap.servers": "x:1"}]'))
    with pytest.raises(FluxError, match=rf"^{path}:\d+: bolt 'kafka-bolt': withProducerProperties "
                                        "takes a ref to a java.util.Properties"):
        read_flux(path)


def test_the_topology_class_uses_the_native_connectors(flux_file):
    try:
        kafka = importlib.import_module("compat.connectors.kafka")
    except ImportError:
        pytest.skip("compat.connectors.kafka is not there yet")
    flux = read_flux(flux_file(_kafka_topology()))
    specs = {spec.name: spec for spec in flux.topology_class().specs}
    assert specs["kafka-spout"].component_cls is kafka.KafkaSpout
    assert specs["kafka-bolt"].component_cls is kafka.KafkaSink
