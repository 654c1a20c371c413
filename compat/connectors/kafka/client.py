"""confluent-kafka clients for the connectors, and the start-up check that the brokers answer.

confluent-kafka is imported here, when a component starts, never when
``compat.connectors`` is imported, so the rest of the package works without it
(``pip install 'heron-storm-compat[kafka]'``). librdkafka's own log lines go to the Python
logger ``compat.connectors.kafka.librdkafka`` (not to the process's stderr).
"""
from __future__ import annotations

import logging
from typing import Any

from .errors import KafkaClientMissing, KafkaUnreachableError
from .settings import key

__all__ = ["kafka", "new_consumer", "new_producer", "wait_for_brokers", "LIBRDKAFKA_LOGGER"]

LIBRDKAFKA_LOGGER = logging.getLogger("compat.connectors.kafka.librdkafka")


def kafka(component: str) -> Any:
    """The ``confluent_kafka`` module, or a one-line error saying how to install it."""
    try:
        import confluent_kafka
    except ImportError:
        raise KafkaClientMissing(f"{component} needs confluent-kafka: pip install "
                                 "'heron-storm-compat[kafka]'") from None
    return confluent_kafka


def new_consumer(component: str, servers: str, properties: dict[str, Any],
                 **forced: Any) -> Any:
    """A Consumer on ``servers`` with the user's ``properties`` and the ``forced`` ones
    (what the spout's guarantees rest on: no auto commit, no auto offset store)."""
    ck = kafka(component)
    conf = {"bootstrap.servers": servers, "logger": LIBRDKAFKA_LOGGER, **properties, **forced}
    return ck.Consumer(conf)


def new_producer(component: str, servers: str, properties: dict[str, Any],
                 defaults: dict[str, Any], **forced: Any) -> Any:
    """A Producer: ``defaults`` under the user's ``properties``, ``forced`` over them."""
    ck = kafka(component)
    conf = {**defaults, "bootstrap.servers": servers, "logger": LIBRDKAFKA_LOGGER,
            **properties, **forced}
    return ck.Producer(conf)


def wait_for_brokers(client: Any, component: str, servers: str, timeout_ms: int,
                     topic: str | None = None) -> Any:
    """Metadata from the cluster (of ``topic`` only, when given), or
    :class:`KafkaUnreachableError` naming ``bootstrap.servers`` when no broker answered
    within ``timeout_ms`` (``heron.connectors.kafka.start.timeout.ms``)."""
    ck = kafka(component)
    try:
        if topic is None:
            return client.list_topics(timeout=timeout_ms / 1000.0)
        return client.list_topics(topic, timeout=timeout_ms / 1000.0)
    except ck.KafkaException as exc:
        error = exc.args[0] if exc.args else exc
        reason = error.str() if hasattr(error, "str") else str(error)
        raise KafkaUnreachableError(
            f"{component}: no Kafka broker answered at {key('bootstrap.servers')}="
            f"{servers!r} within {timeout_ms} ms ({reason}); check the address and that the "
            f"brokers run (or raise {key('start.timeout.ms')!r})") from None
