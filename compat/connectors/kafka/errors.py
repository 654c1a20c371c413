"""The Kafka connectors' errors: each one line naming the key, topic or address at fault.

They are :class:`~compat.connectors.config.ConnectorConfigError` subclasses (so
``ValueError``), because each is something the topology's configuration or the cluster it
points at must change: raised from ``initialize`` they fail the task at start, and the
engines report the one line.
"""
from __future__ import annotations

from compat.connectors.config import ConnectorConfigError

__all__ = ["KafkaConnectorError", "KafkaUnreachableError", "KafkaTopicError",
           "KafkaClientMissing"]


class KafkaConnectorError(ConnectorConfigError):
    """A Kafka connector cannot work with what it was given."""


class KafkaUnreachableError(KafkaConnectorError):
    """No broker of ``bootstrap.servers`` answered at start."""


class KafkaTopicError(KafkaConnectorError):
    """A topic the connector needs does not exist."""


class KafkaClientMissing(KafkaConnectorError):
    """confluent-kafka is not installed."""
