"""Kafka in and out, on confluent-kafka: :class:`KafkaSpout` (Storm's storm-kafka-client
``KafkaSpout``) and :class:`KafkaSink` (Storm's ``KafkaBolt``), with the effectively-once
extension: spout positions in checkpointed state, and a transactional sink.

Settings are Storm config keys under ``heron.connectors.kafka.`` (docs/kafka.md). The
client library is imported when a component starts, so importing this package needs no
confluent-kafka (``pip install 'heron-storm-compat[kafka]'`` to run the components).
"""
from .errors import KafkaClientMissing, KafkaConnectorError, KafkaTopicError, KafkaUnreachableError
from .sink import KafkaSink
from .spout import KafkaSpout

__all__ = ["KafkaSpout", "KafkaSink", "KafkaConnectorError", "KafkaUnreachableError",
           "KafkaTopicError", "KafkaClientMissing"]
