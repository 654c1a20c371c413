"""Storm's storm-kafka-client classes, as Flux files build them, mapped onto the native
``compat.connectors.kafka`` connectors' settings (the contract's
``heron.connectors.kafka.*`` keys).

Each Java class is a small function: it takes the bean's resolved constructor
arguments and method calls and returns a plain value (a dict of settings, a topic
selector...) that the beans referring to it read. What Storm would do with a class
we cannot reproduce (a Java translator function, a Java deserializer) is refused at
the line that names it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import FluxError, Where
from .model import BeanDef, FluxComponent, MethodCall, VertexDef

__all__ = ["KAFKA_BEANS", "KAFKA_VERTICES", "PREFIX", "SINK_CLASS", "SPOUT_CLASS"]

PREFIX = "heron.connectors.kafka."
SPOUT_CLASS = "compat.connectors.kafka:KafkaSpout"
SINK_CLASS = "compat.connectors.kafka:KafkaSink"
DEFAULT_FIELDS = ["topic", "partition", "offset", "key", "value"]

_SPOUT = "org.apache.storm.kafka.spout."
_BOLT = "org.apache.storm.kafka.bolt."
_SERDE = "org.apache.kafka.common.serialization."
_CODECS = {"String": "string", "ByteArray": "bytes", "ByteBuffer": "bytes", "Bytes": "bytes"}
DESERIALIZERS = {f"{_SERDE}{name}Deserializer": codec for name, codec in _CODECS.items()}
SERIALIZERS = {f"{_SERDE}{name}Serializer": codec for name, codec in _CODECS.items()}
FIRST_POLL = ("EARLIEST", "LATEST", "UNCOMMITTED_EARLIEST", "UNCOMMITTED_LATEST")
GUARANTEES = ("AT_LEAST_ONCE", "AT_MOST_ONCE", "NO_GUARANTEE")
_TIME_UNITS_MS = {"NANOSECONDS": 1e-6, "MICROSECONDS": 1e-3, "MILLISECONDS": 1, "SECONDS": 1000,
                  "MINUTES": 60_000, "HOURS": 3_600_000, "DAYS": 86_400_000}


class Resolver(Protocol):
    def resolve(self, value: Any) -> Any: ...


# -- the values beans stand for ----------------------------------------------------------------
@dataclass
class SpoutConfig:
    """A KafkaSpoutConfig or its Builder: settings without the prefix."""

    settings: dict[str, Any]
    consumer: dict[str, Any] = field(default_factory=dict)


class JavaProperties(dict[str, Any]):
    """A ``java.util.Properties`` built with ``put`` / ``setProperty`` calls."""


@dataclass(frozen=True)
class TopicSelector:
    topic: str | None
    field: str | None = None


@dataclass(frozen=True)
class TupleMapper:
    key: str = "key"
    message: str = "message"


@dataclass(frozen=True)
class RecordTranslator:
    name: str


@dataclass(frozen=True)
class Retry:
    settings: dict[str, int]


@dataclass(frozen=True)
class RegexPattern:
    regex: str


@dataclass(frozen=True)
class Interval:
    ms: int


# -- helpers ---------------------------------------------------------------------------------
def _short(class_name: str) -> str:
    return class_name.rsplit(".", 1)[-1]


def _args(ctx: Resolver, bean: BeanDef, counts: tuple[int, ...], shape: str,
          args: list[Any] | None = None) -> list[Any]:
    values = [ctx.resolve(a) for a in (bean.constructor_args if args is None else args)]
    if len(values) not in counts:
        raise FluxError(bean.where, f"{bean.id!r}: {_short(bean.class_name)} takes "
                                    f"constructorArgs {shape}; given {len(values)} argument(s)")
    return values


def _call_args(ctx: Resolver, bean: BeanDef, call: MethodCall, count: int) -> list[Any]:
    values = [ctx.resolve(a) for a in call.args]
    if len(values) != count:
        raise FluxError(call.where, f"{bean.id!r}: {call.name} takes {count} argument(s), "
                                    f"given {len(values)}")
    return values


def _unknown_method(bean: BeanDef, call: MethodCall, known: list[str]) -> FluxError:
    what = f"property {call.property!r}" if call.property else f"method {call.name!r}"
    return FluxError(call.where, f"{bean.id!r}: {_short(bean.class_name)} {what} has no "
                                 f"equivalent here (known: {', '.join(sorted(known))})")


def _typed(value: Any, kind: type, where: Where, what: str) -> Any:
    if kind is int and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)  # a ${property} substituted into a quoted string
    if kind is bool and isinstance(value, str) and value.lower() in ("true", "false"):
        value = value.lower() == "true"
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise FluxError(
            where,
            f"{what} must be {'a whole number' if kind is int else kind.__name__}, not {value!r}",
        )
    return value


def _enum(value: Any, choices: tuple[str, ...], where: Where, what: str) -> str:
    text = str(value).rsplit(".", 1)[-1] if isinstance(value, str) else value
    if text not in choices:
        raise FluxError(where, f"{what}: {value!r} is not one of {', '.join(choices)}")
    return text


# -- spout side ------------------------------------------------------------------------------
def _builder(ctx: Resolver, bean: BeanDef) -> SpoutConfig:
    if bean.factory:
        raise FluxError(bean.where, f"{bean.id!r}: KafkaSpoutConfig$Builder has no factory "
                                    f"{bean.factory!r}; give constructorArgs [servers, topics]")
    values = [ctx.resolve(a) for a in bean.constructor_args]
    config = _new_spout_config(bean, values)
    _builder_calls(ctx, bean, config)
    return config


def _new_spout_config(bean: BeanDef, values: list[Any]) -> SpoutConfig:
    if len(values) < 2 or not isinstance(values[0], str):
        raise FluxError(bean.where, f"{bean.id!r}: {_short(bean.class_name)} takes "
                                    "constructorArgs [bootstrapServers, topic | [topics] | "
                                    "ref to a java.util.regex.Pattern]")
    settings: dict[str, Any] = {"bootstrap.servers": values[0]}
    rest = values[1:]
    if len(rest) == 1 and isinstance(rest[0], RegexPattern):
        settings["spout.topic.pattern"] = rest[0].regex
    else:
        topics = rest[0] if len(rest) == 1 and isinstance(rest[0], list) else rest
        if not topics or not all(isinstance(t, str) for t in topics):
            raise FluxError(bean.where, f"{bean.id!r}: the topics must be text, given {rest!r}")
        settings["spout.topics"] = list(topics)
    return SpoutConfig(settings)


def _builder_calls(ctx: Resolver, bean: BeanDef, config: SpoutConfig) -> None:
    settings = config.settings
    numbers = {"setOffsetCommitPeriodMs": "spout.offset.commit.period.ms",
               "setMaxUncommittedOffsets": "spout.max.uncommitted.offsets",
               "setPollTimeoutMs": "spout.poll.timeout.ms",
               "setPartitionRefreshPeriodMs": "spout.partition.refresh.period.ms"}
    known = [*numbers, "setProp", "setFirstPollOffsetStrategy", "setProcessingGuarantee",
             "setEmitNullTuples", "setRecordTranslator", "setRetry", "setGroupId"]
    for call in bean.calls:
        if call.name == "setProp":
            _set_props(ctx, bean, call, config)
        elif call.name in numbers:
            (value,) = _call_args(ctx, bean, call, 1)
            settings[numbers[call.name]] = _typed(value, int, call.where, call.name)
        elif call.name == "setFirstPollOffsetStrategy":
            (value,) = _call_args(ctx, bean, call, 1)
            settings["spout.first.poll.offset.strategy"] = _enum(value, FIRST_POLL, call.where,
                                                                 call.name)
        elif call.name == "setProcessingGuarantee":
            (value,) = _call_args(ctx, bean, call, 1)
            settings["spout.processing.guarantee"] = _enum(value, GUARANTEES, call.where,
                                                           call.name)
        elif call.name == "setEmitNullTuples":
            (value,) = _call_args(ctx, bean, call, 1)
            settings["spout.emit.null.tuples"] = _typed(value, bool, call.where, call.name)
        elif call.name == "setGroupId":  # Storm 1.x's builder; Storm 2 uses setProp
            (value,) = _call_args(ctx, bean, call, 1)
            config.consumer["group.id"] = _typed(value, str, call.where, call.name)
        elif call.name == "setRecordTranslator":
            values = [ctx.resolve(a) for a in call.args]
            if len(values) != 1 or not isinstance(values[0], RecordTranslator):
                raise FluxError(call.where, f"{bean.id!r}: setRecordTranslator takes a ref to "
                                            "org.apache.storm.kafka.spout.DefaultRecordTranslator "
                                            "here (a Java translator function cannot run)")
            settings["spout.record.translator"] = values[0].name
        elif call.name == "setRetry":
            (value,) = _call_args(ctx, bean, call, 1)
            if not isinstance(value, Retry):
                raise FluxError(call.where, f"{bean.id!r}: setRetry takes a ref to a "
                                            "KafkaSpoutRetryExponentialBackoff")
            settings.update(value.settings)
        else:
            raise _unknown_method(bean, call, known)
    if config.consumer:
        settings["consumer.properties"] = dict(config.consumer)


def _set_props(ctx: Resolver, bean: BeanDef, call: MethodCall, config: SpoutConfig) -> None:
    values = [ctx.resolve(a) for a in call.args]
    if len(values) == 2 and isinstance(values[0], str):
        pairs = {values[0]: values[1]}
    elif len(values) == 1 and isinstance(values[0], dict):
        pairs = dict(values[0])
    else:
        raise FluxError(call.where, f"{bean.id!r}: setProp takes (key, value), a map or a "
                                    "ref to a java.util.Properties")
    for key, value in pairs.items():
        if key in ("key.deserializer", "value.deserializer"):
            codec = DESERIALIZERS.get(str(value))
            if codec is None:
                raise FluxError(call.where, f"{bean.id!r}: {key} {value} is a Java class that "
                                            "cannot run here; use one of "
                                            f"{', '.join(sorted(DESERIALIZERS))}")
            config.settings[f"spout.{key}"] = codec
        elif key == "enable.auto.commit":
            raise FluxError(call.where, f"{bean.id!r}: enable.auto.commit cannot be set: the "
                                        "spout commits offsets itself (spout.processing.guarantee)")
        elif key == "bootstrap.servers":
            config.settings["bootstrap.servers"] = value
        else:
            config.consumer[str(key)] = value


def _spout_config(ctx: Resolver, bean: BeanDef) -> SpoutConfig:
    if bean.factory:
        if bean.factory != "builder":
            raise FluxError(bean.where, f"{bean.id!r}: KafkaSpoutConfig has no factory "
                                        f"{bean.factory!r} (use builder)")
        config = _new_spout_config(bean, [ctx.resolve(a) for a in bean.factory_args])
        # the static builder() sets String deserializers (the connector's default too)
        config.settings.setdefault("spout.key.deserializer", "string")
        config.settings.setdefault("spout.value.deserializer", "string")
        _builder_calls(ctx, bean, config)
        return config
    (builder,) = _args(ctx, bean, (1,), "[ref to a KafkaSpoutConfig$Builder]")
    if not isinstance(builder, SpoutConfig):
        raise FluxError(bean.where, f"{bean.id!r}: KafkaSpoutConfig takes a ref to a "
                                    "KafkaSpoutConfig$Builder")
    if bean.calls:
        raise _unknown_method(bean, bean.calls[0], [])
    return SpoutConfig(dict(builder.settings), dict(builder.consumer))


def _kafka_spout(ctx: Resolver, vertex: VertexDef) -> FluxComponent:
    (config,) = _args(ctx, vertex, (1,), "[ref to a KafkaSpoutConfig]")
    if not isinstance(config, SpoutConfig):
        raise FluxError(vertex.where, f"spout {vertex.id!r}: KafkaSpout takes a ref to a "
                                      "KafkaSpoutConfig (or its Builder)")
    if vertex.calls:
        raise _unknown_method(vertex, vertex.calls[0], [])
    return FluxComponent(id=vertex.id, role="spout", kind="kafka_spout",
                         class_name=vertex.class_name, parallelism=vertex.parallelism,
                         line=vertex.where.line, file=vertex.where.file,
                         outputs={"default": list(DEFAULT_FIELDS)},
                         settings={PREFIX + k: v for k, v in config.settings.items()},
                         config=dict(vertex.config), class_path=SPOUT_CLASS)


def _translator(ctx: Resolver, bean: BeanDef) -> RecordTranslator:
    _args(ctx, bean, (0,), "[]")
    return RecordTranslator("default")


def _retry(ctx: Resolver, bean: BeanDef) -> Retry:
    initial, period, retries, cap = _args(
        ctx, bean, (4,), "[initialDelay, delayPeriod, maxRetries, maxDelay] (TimeInterval refs)")
    for name, value in (("initialDelay", initial), ("delayPeriod", period), ("maxDelay", cap)):
        if not isinstance(value, Interval):
            raise FluxError(bean.where, f"{bean.id!r}: {name} must be a ref to a "
                                        "KafkaSpoutRetryExponentialBackoff$TimeInterval")
    retries = _typed(retries, int, bean.where, "maxRetries")
    return Retry({"spout.retry.initial.delay.ms": initial.ms,
                  "spout.retry.delay.period.ms": period.ms,
                  "spout.retry.max.delay.ms": cap.ms,
                  # Integer.MAX_VALUE is Storm's "forever"
                  "spout.retry.max.retries": -1 if retries >= 2**31 - 1 else retries})


def _interval(ctx: Resolver, bean: BeanDef) -> Interval:
    factories = {"seconds": "SECONDS", "milliSeconds": "MILLISECONDS",
                 "microSeconds": "MICROSECONDS"}
    if bean.factory:
        unit = factories.get(bean.factory)
        if unit is None:
            raise FluxError(bean.where, f"{bean.id!r}: TimeInterval has no factory "
                                        f"{bean.factory!r} (known: {', '.join(factories)})")
        (length,) = _args(ctx, bean, (1,), "[length]", bean.factory_args)
    else:
        length, unit = _args(ctx, bean, (2,), "[length, TimeUnit]")
        unit = _enum(unit, tuple(_TIME_UNITS_MS), bean.where, "TimeUnit")
    length = _typed(length, int, bean.where, "length")
    return Interval(int(round(length * _TIME_UNITS_MS[unit])))


def _pattern(ctx: Resolver, bean: BeanDef) -> RegexPattern:
    if bean.factory != "compile":
        raise FluxError(bean.where, f"{bean.id!r}: build java.util.regex.Pattern with "
                                    "factory: compile and factoryArgs: [regex]")
    (regex,) = _args(ctx, bean, (1,), "[regex]", bean.factory_args)
    return RegexPattern(_typed(regex, str, bean.where, "regex"))


# -- bolt side -------------------------------------------------------------------------------
def _properties(ctx: Resolver, bean: BeanDef) -> JavaProperties:
    _args(ctx, bean, (0,), "[]")
    props = JavaProperties()
    for call in bean.calls:
        if call.name in ("put", "setProperty"):
            key, value = _call_args(ctx, bean, call, 2)
            props[str(key)] = value
        elif call.name == "putAll":
            (values,) = _call_args(ctx, bean, call, 1)
            if not isinstance(values, dict):
                raise FluxError(call.where, f"{bean.id!r}: putAll takes a map")
            props.update({str(k): v for k, v in values.items()})
        else:
            raise _unknown_method(bean, call, ["put", "putAll", "setProperty"])
    return props


def _default_selector(ctx: Resolver, bean: BeanDef) -> TopicSelector:
    (topic,) = _args(ctx, bean, (1,), "[topic]")
    return TopicSelector(topic=_typed(topic, str, bean.where, "the topic"))


def _field_selector(ctx: Resolver, bean: BeanDef) -> TopicSelector:
    values = _args(ctx, bean, (1, 2), "[fieldName, defaultTopicName]")
    return TopicSelector(topic=values[1] if len(values) > 1 else None,
                         field=_typed(values[0], str, bean.where, "the field name"))


def _mapper(ctx: Resolver, bean: BeanDef) -> TupleMapper:
    values = _args(ctx, bean, (0, 2), "[] or [keyField, messageField]")
    return TupleMapper(*values) if values else TupleMapper()


def _kafka_bolt(ctx: Resolver, vertex: VertexDef) -> FluxComponent:
    _args(ctx, vertex, (0,), "[] (configure it with withProducerProperties, "
                             "withTopicSelector, withTupleToKafkaMapper)")
    settings: dict[str, Any] = {}
    producer: dict[str, Any] | None = None
    selector: TopicSelector | None = None
    known = ["withProducerProperties", "withTopicSelector", "withTupleToKafkaMapper",
             "setFireAndForget", "setAsync"]
    for call in vertex.calls:
        if call.name == "withProducerProperties":
            (props,) = _call_args(ctx, vertex, call, 1)
            if not isinstance(props, JavaProperties):
                raise FluxError(call.where, f"bolt {vertex.id!r}: withProducerProperties takes "
                                            "a ref to a java.util.Properties component (with "
                                            "put configMethods); Flux never turns a map into one")
            producer = dict(props)
        elif call.name == "withTopicSelector":
            (value,) = _call_args(ctx, vertex, call, 1)
            if isinstance(value, str):
                value = TopicSelector(topic=value)
            if not isinstance(value, TopicSelector):
                raise FluxError(call.where, f"bolt {vertex.id!r}: withTopicSelector takes a topic "
                                            "or a ref to a DefaultTopicSelector / "
                                            "FieldNameTopicSelector")
            selector = value
        elif call.name == "withTupleToKafkaMapper":
            (mapper,) = _call_args(ctx, vertex, call, 1)
            if not isinstance(mapper, TupleMapper):
                raise FluxError(call.where, f"bolt {vertex.id!r}: withTupleToKafkaMapper takes a "
                                            "ref to a FieldNameBasedTupleToKafkaMapper")
            settings["sink.key.field"], settings["sink.message.field"] = mapper.key, mapper.message
        elif call.name == "setFireAndForget":
            (value,) = _call_args(ctx, vertex, call, 1)
            settings["sink.fire.and.forget"] = _typed(value, bool, call.where, call.name)
        elif call.name == "setAsync":
            # async or not, a tuple is acked once the broker confirmed its record
            _typed(_call_args(ctx, vertex, call, 1)[0], bool, call.where, call.name)
        else:
            raise _unknown_method(vertex, call, known)
    if producer is None:
        raise FluxError(vertex.where, f"bolt {vertex.id!r}: KafkaBolt needs "
                                      "withProducerProperties (with bootstrap.servers)")
    for key in ("key.serializer", "value.serializer"):
        if key in producer:
            value = producer.pop(key)
            codec = SERIALIZERS.get(str(value))
            if codec is None:
                raise FluxError(vertex.where, f"bolt {vertex.id!r}: {key} {value} is a Java class "
                                              "that cannot run here; use one of "
                                              f"{', '.join(sorted(SERIALIZERS))}")
            settings[f"sink.{key}"] = codec
    servers = producer.pop("bootstrap.servers", None)
    if not servers:
        raise FluxError(vertex.where, f"bolt {vertex.id!r}: its producer properties have no "
                                      "bootstrap.servers")
    settings["bootstrap.servers"] = servers
    settings["producer.properties"] = producer
    topic_conf = vertex.config.get("topic")
    if selector is None and topic_conf:
        selector = TopicSelector(topic=str(topic_conf))  # Storm's fallback: the `topic` conf
    if selector is None:
        raise FluxError(vertex.where, f"bolt {vertex.id!r}: KafkaBolt needs withTopicSelector "
                                      "(or a 'topic' in its config)")
    if selector.topic is not None:
        settings["sink.topic"] = selector.topic
    if selector.field is not None:
        settings["sink.topic.field"] = selector.field
    return FluxComponent(id=vertex.id, role="bolt", kind="kafka_sink",
                         class_name=vertex.class_name, parallelism=vertex.parallelism,
                         line=vertex.where.line, file=vertex.where.file, outputs={},
                         settings={PREFIX + k: v for k, v in settings.items()},
                         config=dict(vertex.config), class_path=SINK_CLASS)


#: Java class -> what a ``components`` entry of it stands for
KAFKA_BEANS: dict[str, Callable[[Any, BeanDef], Any]] = {
    f"{_SPOUT}KafkaSpoutConfig$Builder": _builder,
    f"{_SPOUT}KafkaSpoutConfig": _spout_config,
    f"{_SPOUT}DefaultRecordTranslator": _translator,
    f"{_SPOUT}KafkaSpoutRetryExponentialBackoff": _retry,
    f"{_SPOUT}KafkaSpoutRetryExponentialBackoff$TimeInterval": _interval,
    "java.util.Properties": _properties,
    "java.util.regex.Pattern": _pattern,
    f"{_BOLT}selector.DefaultTopicSelector": _default_selector,
    f"{_BOLT}selector.FieldNameTopicSelector": _field_selector,
    f"{_BOLT}mapper.FieldNameBasedTupleToKafkaMapper": _mapper,
}

#: Java class -> the spout or bolt it becomes
KAFKA_VERTICES: dict[str, Callable[[Any, VertexDef], FluxComponent]] = {
    f"{_SPOUT}KafkaSpout": _kafka_spout,
    f"{_BOLT}KafkaBolt": _kafka_bolt,
}
