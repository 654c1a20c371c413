"""Every setting of the Kafka connectors, read once at start and checked.

The keys are Storm config keys under ``heron.connectors.kafka.`` (docs/kafka.md lists
them; notes/kafka-contract.md is the contract the Flux reader and the migrator write to),
read with :func:`compat.connectors.config.setting` so a bad one fails the task at start
naming the key. The values become frozen dataclasses the components keep, so the hot path
never looks a key up again.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from compat.connectors.config import ConnectorConfigError, setting
from compat.storm_api.config import RELIABILITY_MODE_KEY

__all__ = ["PREFIX", "key", "SpoutSettings", "SinkSettings", "spout_settings", "sink_settings",
           "effectively_once", "STRATEGIES", "GUARANTEES", "SERDES"]

PREFIX = "heron.connectors.kafka."

#: Storm's FirstPollOffsetStrategy values
STRATEGIES = ("EARLIEST", "LATEST", "UNCOMMITTED_EARLIEST", "UNCOMMITTED_LATEST")
#: Storm's KafkaSpoutConfig.ProcessingGuarantee values
GUARANTEES = ("AT_LEAST_ONCE", "AT_MOST_ONCE", "NO_GUARANTEE")
#: how keys and values are turned from and into bytes
SERDES = ("string", "bytes", "json")


def key(name: str) -> str:
    """The full config key of a setting (``key("bootstrap.servers")``)."""
    return PREFIX + name


def effectively_once(component: Any) -> bool:
    """Whether the topology runs under Heron's ``EFFECTIVELY_ONCE`` (acking off, state
    checkpointed): the spout then keeps its positions in state instead of acking."""
    conf = getattr(component, "storm_conf", None) or {}
    return str(conf.get(RELIABILITY_MODE_KEY, "")).upper() == "EFFECTIVELY_ONCE"


def _properties(component: Any, name: str) -> dict[str, Any]:
    """A dict of client properties (``consumer.properties``/``producer.properties``):
    string keys, scalar values, as Storm's ``setProp`` and ``withProducerProperties`` take."""
    value = setting_raw(component, key(name))
    if value is None:
        return {}
    where = f"{type(component).__name__}: config key {key(name)!r}"
    if not isinstance(value, dict):
        raise ConnectorConfigError(f"{where} must be a mapping of Kafka client properties, "
                                   f"not {value!r}")
    out: dict[str, Any] = {}
    for prop, val in value.items():
        if not isinstance(prop, str) or not isinstance(val, (str, int, float, bool)):
            raise ConnectorConfigError(f"{where}: property {prop!r} must map a string to a "
                                       f"string, number or boolean, not {val!r}")
        out[prop] = val
    return out


def setting_raw(component: Any, full_key: str) -> Any:
    """A key's raw value (component conf first, then the class's ``config``), or None."""
    conf = getattr(component, "storm_conf", None) or {}
    if full_key in conf:
        return conf[full_key]
    return (getattr(type(component), "config", None) or {}).get(full_key)


@dataclass(frozen=True)
class SpoutSettings:
    """What a KafkaSpout was configured with (docs/kafka.md, "Spout settings")."""

    bootstrap_servers: str
    topics: tuple[str, ...]
    pattern: re.Pattern[str] | None
    consumer_properties: dict[str, Any]
    strategy: str = "UNCOMMITTED_EARLIEST"
    guarantee: str = "AT_LEAST_ONCE"
    commit_period_ms: int = 30_000
    max_uncommitted: int = 10_000_000
    poll_timeout_ms: int = 200
    refresh_period_ms: int = 2_000
    retry_initial_ms: int = 0
    retry_period_ms: int = 2
    retry_max_delay_ms: int = 10_000
    retry_max_retries: int = -1
    emit_null_tuples: bool = False
    #: a bounded read: exhausted once the partitions are read to their end (bounded.py)
    finite: bool = False
    key_deserializer: str = "string"
    value_deserializer: str = "string"
    translator: str = "default"
    output_fields: tuple[str, ...] = ("topic", "partition", "offset", "key", "value")
    output_stream: str = "default"
    start_timeout_ms: int = 10_000
    effectively_once: bool = False


def spout_settings(component: Any) -> SpoutSettings:
    """Read and check a spout's settings (raises ConnectorConfigError naming the key)."""
    servers = setting(component, key("bootstrap.servers"), "str")
    topics = setting(component, key("spout.topics"), "strs", None)
    pattern_text = setting(component, key("spout.topic.pattern"), "str", None)
    if topics and pattern_text:
        raise ConnectorConfigError(
            f"{type(component).__name__}: set one of {key('spout.topics')!r} and "
            f"{key('spout.topic.pattern')!r}, not both")
    if not topics and not pattern_text:
        raise ConnectorConfigError(
            f"{type(component).__name__}: config key {key('spout.topics')!r} is required "
            f"(a topic or a list of topics), or {key('spout.topic.pattern')!r} (a regex)")
    pattern = None
    if pattern_text:
        try:
            pattern = re.compile(pattern_text)
        except re.error as exc:
            raise ConnectorConfigError(
                f"{type(component).__name__}: config key {key('spout.topic.pattern')!r}: "
                f"{pattern_text!r} is not a regular expression ({exc})") from None
    props = _properties(component, "consumer.properties")
    if "enable.auto.commit" in props:
        raise ConnectorConfigError(
            f"{type(component).__name__}: config key {key('consumer.properties')!r} sets "
            "'enable.auto.commit': the spout commits offsets itself (as Storm's KafkaSpout "
            "does); remove it and choose spout.processing.guarantee instead")
    for java_key in ("key.deserializer", "value.deserializer"):
        if java_key in props:
            raise ConnectorConfigError(
                f"{type(component).__name__}: config key {key('consumer.properties')!r} sets "
                f"{java_key!r} (a Java class); use {key('spout.' + java_key)!r}: string, "
                "bytes or json")
    fields = setting(component, key("spout.output.fields"), "strs", None)

    def intg(name: str, default: int, minimum: int) -> int:
        value: int = setting(component, key(name), "int", default, minimum=minimum)
        return value

    return SpoutSettings(
        bootstrap_servers=servers,
        topics=tuple(topics or ()),
        pattern=pattern,
        consumer_properties=props,
        strategy=setting(component, key("spout.first.poll.offset.strategy"), "str",
                         "UNCOMMITTED_EARLIEST", choices=STRATEGIES),
        guarantee=setting(component, key("spout.processing.guarantee"), "str",
                          "AT_LEAST_ONCE", choices=GUARANTEES),
        commit_period_ms=intg("spout.offset.commit.period.ms", 30_000, 1),
        max_uncommitted=intg("spout.max.uncommitted.offsets", 10_000_000, 1),
        poll_timeout_ms=intg("spout.poll.timeout.ms", 200, 0),
        refresh_period_ms=intg("spout.partition.refresh.period.ms", 2_000, 1),
        retry_initial_ms=intg("spout.retry.initial.delay.ms", 0, 0),
        retry_period_ms=intg("spout.retry.delay.period.ms", 2, 0),
        retry_max_delay_ms=intg("spout.retry.max.delay.ms", 10_000, 0),
        retry_max_retries=intg("spout.retry.max.retries", -1, -1),
        emit_null_tuples=setting(component, key("spout.emit.null.tuples"), "bool", False),
        finite=setting(component, key("spout.finite"), "bool", False),
        key_deserializer=setting(component, key("spout.key.deserializer"), "str", "string",
                                 choices=SERDES),
        value_deserializer=setting(component, key("spout.value.deserializer"), "str",
                                   "string", choices=SERDES),
        translator=setting(component, key("spout.record.translator"), "str", "default"),
        output_fields=tuple(fields) if fields else SpoutSettings.output_fields,
        output_stream=setting(component, key("spout.output.stream"), "str", "default"),
        start_timeout_ms=intg("start.timeout.ms", 10_000, 1),
        effectively_once=effectively_once(component),
    )


@dataclass(frozen=True)
class SinkSettings:
    """What a KafkaSink was configured with (docs/kafka.md, "Sink settings")."""

    bootstrap_servers: str
    producer_properties: dict[str, Any]
    topic: str | None
    topic_field: str | None
    key_field: str = "key"
    message_field: str = "message"
    key_serializer: str = "string"
    value_serializer: str = "string"
    fire_and_forget: bool = False
    transactional: bool = False
    transactional_id_prefix: str = ""
    start_timeout_ms: int = 10_000
    effectively_once: bool = False


def sink_settings(component: Any) -> SinkSettings:
    """Read and check a sink's settings (raises ConnectorConfigError naming the key)."""
    name = type(component).__name__
    servers = setting(component, key("bootstrap.servers"), "str")
    topic = setting(component, key("sink.topic"), "str", None)
    topic_field = setting(component, key("sink.topic.field"), "str", None)
    if topic is None and topic_field is None:
        raise ConnectorConfigError(
            f"{name}: config key {key('sink.topic')!r} is required (the topic written to; "
            f"Storm's DefaultTopicSelector), or {key('sink.topic.field')!r} (the tuple field "
            "naming each tuple's topic)")
    props = _properties(component, "producer.properties")
    for java_key in ("key.serializer", "value.serializer"):
        if java_key in props:
            raise ConnectorConfigError(
                f"{name}: config key {key('producer.properties')!r} sets {java_key!r} (a Java "
                f"class); use {key('sink.' + java_key)!r}: string, bytes or json")
    transactional = setting(component, key("sink.transactional"), "bool", False)
    if "transactional.id" in props:
        raise ConnectorConfigError(
            f"{name}: config key {key('producer.properties')!r} sets 'transactional.id'; the "
            f"sink derives one per task: set {key('sink.transactional')!r} and "
            f"{key('sink.transactional.id.prefix')!r} instead")
    conf = getattr(component, "storm_conf", None) or {}
    default_prefix = "-".join(part for part in (str(conf.get("topology.name") or ""),
                                                 str(component.component_name or name)) if part)
    return SinkSettings(
        bootstrap_servers=servers,
        producer_properties=props,
        topic=topic,
        topic_field=topic_field,
        key_field=setting(component, key("sink.key.field"), "str", "key"),
        message_field=setting(component, key("sink.message.field"), "str", "message"),
        key_serializer=setting(component, key("sink.key.serializer"), "str", "string",
                               choices=SERDES),
        value_serializer=setting(component, key("sink.value.serializer"), "str", "string",
                                 choices=SERDES),
        fire_and_forget=setting(component, key("sink.fire.and.forget"), "bool", False),
        transactional=transactional,
        transactional_id_prefix=setting(component, key("sink.transactional.id.prefix"), "str",
                                        default_prefix),
        start_timeout_ms=setting(component, key("start.timeout.ms"), "int", 10_000, minimum=1),
        effectively_once=effectively_once(component),
    )
