"""The check a Kafka component's settings get before a topology starts.

Without it an unreachable broker or a topic that does not exist shows up only inside
each task, which fails at start and is restarted again and again until the run's time
limit: the user sees a crash loop, not the one line that says what is wrong. The CLI
calls ``preflight`` of every component class that has one (engine/common/plan/preflight.py)
with the component's merged config, before anything is launched; a problem is a
:class:`~compat.connectors.config.ConnectorConfigError` naming the key, so ``heron run``
exits 2 with it.
"""
from __future__ import annotations

import logging
from typing import Any

from compat.storm_api.component import Component

from .client import kafka, new_consumer, wait_for_brokers
from .errors import KafkaTopicError
from .partitions import discover
from .settings import key, sink_settings, spout_settings

__all__ = ["check_spout", "check_sink"]

#: the longest the check waits for a broker (the tasks' own start timeout may be longer)
PREFLIGHT_TIMEOUT_MS = 5000

#: librdkafka's lines during the check ("connection refused" each retry) are not shown:
#: the check's own one-line verdict says what matters
_QUIET = logging.getLogger("compat.connectors.kafka.preflight.librdkafka")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


def _stand_in(cls: type[Component], name: str, conf: dict[str, Any]) -> Component:
    """An unstarted instance of ``cls`` carrying the conf a task would get, for the
    settings readers (which read ``storm_conf`` and the class's ``config``)."""
    component = cls.__new__(cls)
    component.storm_conf = dict(conf)
    component.component_name = name
    return component


def _probe(name: str, servers: str, timeout_ms: int,
           topics: list[str]) -> tuple[dict[str, Any], set[str]]:
    """(topic metadata found, the named topics the broker gave no answer about)."""
    consumer = new_consumer(name, servers, {"group.id": "heron-preflight"},
                            **{"enable.auto.commit": False, "logger": _QUIET})
    timeout_ms = min(timeout_ms, PREFLIGHT_TIMEOUT_MS)
    unanswered: set[str] = set()
    try:
        found = dict(wait_for_brokers(consumer, name, servers, timeout_ms,
                                      topic=topics[0] if topics else None).topics)
        for topic in topics:
            if topic in found:
                continue
            try:
                found.update(consumer.list_topics(topic=topic, timeout=timeout_ms / 1000).topics)
            except kafka(name).KafkaException:
                unanswered.add(topic)  # the task's own start will tell
        return found, unanswered
    finally:
        consumer.close()


def check_spout(cls: type, name: str, conf: dict[str, Any]) -> None:
    """Settings valid, a broker answering at ``bootstrap.servers``, the named topics
    there (a pattern may match nothing yet: the spout waits for it)."""
    settings = spout_settings(_stand_in(cls, name, conf))
    topics = list(settings.topics or [])
    found, unanswered = _probe(name, settings.bootstrap_servers, settings.start_timeout_ms,
                               topics)
    _, missing = discover(found, [t for t in topics if t not in unanswered], settings.pattern)
    if missing:
        raise KafkaTopicError(
            f"{name}: topic {missing[0]!r} (config key {key('spout.topics')!r}) does not "
            f"exist at {key('bootstrap.servers')}={settings.bootstrap_servers!r}; create it, "
            f"or subscribe with {key('spout.topic.pattern')!r} to wait for topics")


def check_sink(cls: type, name: str, conf: dict[str, Any]) -> None:
    """Settings valid and a broker answering at ``bootstrap.servers``."""
    settings = sink_settings(_stand_in(cls, name, conf))
    _probe(name, settings.bootstrap_servers, settings.start_timeout_ms, [])
