"""Rule ``kafka``: Java specs naming Storm's Kafka classes become the native connectors.

``JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout", ...)`` (and
storm-kafka's older ``org.apache.storm.kafka.KafkaSpout`` / ``storm.kafka.KafkaSpout``)
becomes ``KafkaSpout.spec(...)``, ``JavaBolt.spec(full_class_name=
"org.apache.storm.kafka.bolt.KafkaBolt", ...)`` becomes ``KafkaSink.spec(...)``, both from
``compat.connectors.kafka`` (imported; the Java import dropped once unused). ``name``,
``par``, ``inputs`` and ``config`` are carried as they are; the connector's settings are
added to ``config`` as its ``heron.connectors.kafka.*`` keys (docs/kafka.md).

Why the arguments are guessed at: a streamparse Java spec can pass only primitives
(streamparse sends ``args_list`` as Thrift ``JavaObjectArg``), so Storm's KafkaSpout, whose
constructor takes a ``KafkaSpoutConfig``, cannot really be built from Python. What such
projects run is a Java wrapper taking strings such as (bootstrapServers, topic...). So a
string ``host:port[,host:port]`` is taken for ``bootstrap.servers`` and every other string
that is a legal Kafka topic name for a topic, and the finding (WARNING) says what was
assumed and what to check. Anything else (a number, a variable, a ZooKeeper address, a
ZooKeeper path, outputs that are not a list of names) has no known meaning: the spec is
left as it is with an ERROR naming what stopped the mapping and how to write it by hand.

Storm 1.x storm-kafka's KafkaBolt read its topic and producer settings from the conf
(``topic``, ``kafka.broker.properties``); those keys in a literal ``config`` are mapped too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import PositionProvider, QualifiedNameProvider

from migrate.findings import Level
from migrate.rules.base import Rule
from migrate.rules.java import (
    BOLT_PARAMS,
    KAFKA_BOLTS,
    KAFKA_SPOUTS,
    SPOUT_PARAMS,
    bind_arguments,
    is_none,
    is_storm_kafka,
    java_role,
    literal_string,
    spec_class_name,
)

TARGET_MODULE = "compat.connectors.kafka"
PREFIX = "heron.connectors.kafka."
SERVERS = PREFIX + "bootstrap.servers"
TOPICS = PREFIX + "spout.topics"
PATTERN = PREFIX + "spout.topic.pattern"
OUTPUT_FIELDS = PREFIX + "spout.output.fields"
TRANSLATOR = PREFIX + "spout.record.translator"
SINK_TOPIC = PREFIX + "sink.topic"
SINK_TOPIC_FIELD = PREFIX + "sink.topic.field"
PRODUCER = PREFIX + "producer.properties"

#: Storm's DefaultRecordTranslator fields, which KafkaSpout declares by default
DEFAULT_FIELDS = ("topic", "partition", "offset", "key", "value")
ZOOKEEPER_PORT = 2181

_HOST_PORT = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)"
                        r":(?P<port>\d{1,5})")
_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")

SPOUT_SETTINGS_NOTE = (
    "the Java side's KafkaSpoutConfig is not visible from Python: set what it set as "
    "heron.connectors.kafka.* keys (consumer.properties with group.id, "
    "spout.first.poll.offset.strategy (default UNCOMMITTED_EARLIEST), "
    "spout.processing.guarantee, spout.key/value.deserializer (default string), "
    "spout.record.translator); see docs/kafka.md")
SINK_SETTINGS_NOTE = (
    "the Java side's KafkaBolt settings are not visible from Python: the sink sends the "
    "tuple's 'key' and 'message' fields (Storm's FieldNameBasedTupleToKafkaMapper) as UTF-8 "
    "strings with acks=all; set heron.connectors.kafka.sink.key.field/sink.message.field, "
    "sink.topic.field, producer.properties or the serializers if the wrapper did otherwise; "
    "see docs/kafka.md")


class Unmappable(Exception):
    """What stops a Kafka spec from being mapped, said so a person can act on it."""


@dataclass
class Mapping:
    """The settings a Kafka spec maps to, and what had to be assumed to get them."""

    settings: dict[str, cst.BaseExpression] = field(default_factory=dict)
    assumed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    level: Level = Level.INFO


def _string(value: str) -> cst.SimpleString:
    """A double-quoted literal (the project's style) for a value we generate."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return cst.SimpleString(f'"{escaped}"')


def _string_list(values: Sequence[str]) -> cst.List:
    return cst.List([cst.Element(_string(v)) for v in values])


def _servers(value: str) -> bool:
    """Whether a string is ``host:port[,host:port...]`` (bootstrap.servers' form)."""
    return all(_HOST_PORT.fullmatch(part.strip()) for part in value.split(","))


def _topics(value: str) -> list[str] | None:
    """The topic names a string holds (one, or several separated by commas), else None."""
    parts = [part.strip() for part in value.split(",")]
    if all(_TOPIC.fullmatch(part) for part in parts):
        return parts
    return None


def _literal_keys(config: cst.BaseExpression | None) -> dict[str, cst.BaseExpression]:
    """The string-keyed entries of a literal dict (empty for anything else)."""
    if not isinstance(config, cst.Dict):
        return {}
    out = {}
    for element in config.elements:
        if isinstance(element, cst.DictElement):
            key = literal_string(element.key)
            if key is not None:
                out[key] = element.value
    return out


def _classify_args(args_list: cst.Arg | None) -> tuple[list[str], list[str], list[str]]:
    """``(servers, topics, assumptions)`` read from a literal ``args_list``.

    Raises Unmappable for any argument that is not a string of either form, since its
    meaning for the Java class cannot be known.
    """
    if args_list is None or is_none(args_list):
        return [], [], []
    node = args_list.value
    if not isinstance(node, (cst.List, cst.Tuple)):
        raise Unmappable(f"args_list ({Rule.code_of(node)}) is not a literal list, so its "
                         "arguments cannot be read")
    servers: list[str] = []
    topics: list[str] = []
    assumed: list[str] = []
    for number, element in enumerate(node.elements, start=1):
        value = literal_string(element.value) if isinstance(element, cst.Element) else None
        if value is None:
            raise Unmappable(f"argument {number} of args_list ({Rule.code_of(element.value)}) "
                             "is not a string literal: its meaning for the Java class is unknown")
        if ":" in value and _servers(value):
            ports = [int(m["port"]) for m in (_HOST_PORT.fullmatch(p.strip())
                                               for p in value.split(",")) if m]
            if ZOOKEEPER_PORT in ports:
                raise Unmappable(f"argument {number} of args_list ({value!r}) looks like a "
                                 "ZooKeeper address (port 2181): storm-kafka found the brokers "
                                 "through ZooKeeper, which the native connector does not")
            if servers:
                raise Unmappable(f"args_list holds two broker lists ({servers[0]!r} and "
                                 f"{value!r}): which one the Java class used is unknown")
            servers.append(value)
            assumed.append(f"{value!r} is bootstrap.servers")
            continue
        names = _topics(value)
        if names is None:
            raise Unmappable(f"argument {number} of args_list ({value!r}) is neither "
                             "host:port[,host:port] nor a topic name (a ZooKeeper root or "
                             "consumer id of storm-kafka has no counterpart)")
        topics.extend(names)
        assumed.append(f"{value!r} is the topic" + ("s" if len(names) > 1 else ""))
    return servers, topics, assumed


def _string_fields(outputs: cst.Arg | None) -> list[str] | None:
    """The field names of a literal list of strings; None when there are no outputs."""
    if outputs is None or is_none(outputs):
        return None
    node = outputs.value
    if isinstance(node, (cst.List, cst.Tuple)):
        fields = [literal_string(e.value) if isinstance(e, cst.Element) else None
                  for e in node.elements]
        if all(f is not None for f in fields):
            return [f for f in fields if f is not None]
    raise Unmappable(f"outputs ({Rule.code_of(node)}) is not a literal list of field names "
                     "(named streams cannot be declared on the native spout)")


def map_spout(bound: dict[str, cst.Arg]) -> Mapping:
    """The native KafkaSpout settings for a Java KafkaSpout spec's arguments."""
    config = bound["config"].value if "config" in bound else None
    present = _literal_keys(config)
    servers, topics, assumed = _classify_args(bound.get("args_list"))
    mapping = Mapping(assumed=assumed, level=Level.WARNING if assumed else Level.INFO)
    if servers:
        mapping.settings[SERVERS] = _string(servers[0])
    elif SERVERS not in present:
        raise Unmappable("no broker address: args_list has no host:port string and config "
                         f"has no {SERVERS!r}")
    if topics:
        mapping.settings[TOPICS] = _string(topics[0]) if len(topics) == 1 else _string_list(topics)
    elif TOPICS not in present and PATTERN not in present:
        raise Unmappable("no topic: args_list has no topic name and config has neither "
                         f"{TOPICS!r} nor {PATTERN!r}")
    fields = _string_fields(bound.get("outputs"))
    if fields is not None and tuple(fields) != DEFAULT_FIELDS:
        mapping.settings[OUTPUT_FIELDS] = _string_list(fields)
        if TRANSLATOR in present:
            mapping.notes.append(f"outputs {fields} became {OUTPUT_FIELDS}: check that the "
                                 f"{TRANSLATOR} returns values in this order")
            mapping.level = max(mapping.level, Level.WARNING, key=_rank)
        else:
            mapping.notes.append(
                f"outputs {fields} are not Storm's default record fields {list(DEFAULT_FIELDS)}: "
                f"they became {OUTPUT_FIELDS}, and the Java side's RecordTranslator must be "
                f"ported: write a Python callable(record) -> list of {len(fields)} values (or "
                f"None to skip the record) and set {TRANSLATOR}: 'module:callable'")
            mapping.level = Level.ERROR
    elif fields is not None:
        mapping.notes.append("outputs are Storm's default record fields: the native spout "
                             "declares them itself")
    return mapping


def map_sink(bound: dict[str, cst.Arg]) -> Mapping:
    """The native KafkaSink settings for a Java KafkaBolt spec's arguments."""
    config = bound["config"].value if "config" in bound else None
    present = _literal_keys(config)
    servers, topics, assumed = _classify_args(bound.get("args_list"))
    mapping = Mapping(assumed=assumed, level=Level.WARNING if assumed else Level.INFO)
    _map_storm1_conf(present, mapping, servers, topics)
    if servers:
        mapping.settings[SERVERS] = _string(servers[0])
    elif SERVERS not in present and SERVERS not in mapping.settings:
        raise Unmappable("no broker address: args_list has no host:port string and config "
                         f"has neither {SERVERS!r} nor kafka.broker.properties")
    if len(topics) > 1:
        raise Unmappable(f"args_list names several topics {topics}: which one the bolt "
                         "writes to (or whether a tuple field chooses) is unknown")
    if topics:
        mapping.settings[SINK_TOPIC] = _string(topics[0])
    elif not {SINK_TOPIC, SINK_TOPIC_FIELD} & (set(present) | set(mapping.settings)):
        raise Unmappable("no topic: args_list has no topic name and config has neither "
                         f"{SINK_TOPIC!r}, {SINK_TOPIC_FIELD!r} nor Storm 1's 'topic'")
    outputs = bound.get("outputs")
    if outputs is not None and not is_none(outputs) and not (
            isinstance(outputs.value, (cst.List, cst.Tuple)) and not outputs.value.elements):
        mapping.notes.append("outputs dropped: Storm's KafkaBolt emits nothing, and neither "
                             "does KafkaSink")
        mapping.level = max(mapping.level, Level.WARNING, key=_rank)
    return mapping


def _map_storm1_conf(present: dict[str, cst.BaseExpression], mapping: Mapping,
                     servers: list[str], topics: list[str]) -> None:
    """Storm 1.x storm-kafka's KafkaBolt read ``topic`` and ``kafka.broker.properties``
    from its conf: carry them to the native keys (the old keys stay, unread)."""
    topic = literal_string(present.get("topic"))
    if topic is not None and not topics and SINK_TOPIC not in present:
        mapping.settings[SINK_TOPIC] = _string(topic)
        mapping.notes.append(f"Storm 1's 'topic' config became {SINK_TOPIC}")
    broker = present.get("kafka.broker.properties")
    if broker is None or PRODUCER in present:
        return
    if not isinstance(broker, cst.Dict):
        raise Unmappable("config's kafka.broker.properties is not a literal dict, so the "
                         "broker address in it cannot be read")
    kept = []
    for element in broker.elements:
        key = literal_string(element.key) if isinstance(element, cst.DictElement) else None
        if key in ("bootstrap.servers", "metadata.broker.list"):
            address = literal_string(element.value)
            if address is None or not _servers(address):
                raise Unmappable(f"kafka.broker.properties' {key} is not a literal "
                                 "host:port[,host:port] string")
            if not servers and SERVERS not in present:
                mapping.settings[SERVERS] = _string(address)
        elif key in ("key.serializer", "value.serializer", "serializer.class",
                     "key.serializer.class"):
            mapping.notes.append(f"kafka.broker.properties' {key} dropped: the sink writes "
                                 "UTF-8 strings unless sink.key/value.serializer say otherwise")
        else:
            kept.append(element.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    if kept:
        mapping.settings[PRODUCER] = cst.Dict(kept)
        mapping.notes.append(f"kafka.broker.properties became {PRODUCER}: check every key is a "
                             "librdkafka producer property (Java-client-only keys are refused)")
        mapping.level = max(mapping.level, Level.WARNING, key=_rank)


_LEVELS = (Level.INFO, Level.WARNING, Level.ERROR)


def _rank(level: Level) -> int:
    return _LEVELS.index(level)


def _separator(elements: Sequence[cst.BaseDictElement]) -> cst.Comma:
    """The comma (with the whitespace after it) a dict uses between its entries: the one
    after the next-to-last entry, since a trailing comma's line break belongs to the
    closing brace; a plain ``, `` when the dict shows none."""
    for element in (elements[-2:-1] or elements[-1:]):
        comma = element.comma
        if isinstance(comma, cst.Comma) and not (
                isinstance(comma.whitespace_after, cst.SimpleWhitespace)
                and not comma.whitespace_after.value):
            return comma
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _merge_config(config: cst.Arg | None, settings: dict[str, cst.BaseExpression],
                  line: cst.ParenthesizedWhitespace | None = None) -> cst.BaseExpression:
    """The spec's config with the connector settings added.

    A literal dict gets the new entries at its end (keys it already has win, so the
    user's explicit settings stay), laid out like its own entries; any other expression
    is kept as ``{**expr, ...}`` so it is still evaluated as before. A new dict in a call
    laid out one argument per line (``line`` is the break before each argument) gets one
    entry per line, so the rewritten spec reads like the rest of the file.
    """
    new = [(key, value) for key, value in settings.items()]
    if config is not None and isinstance(config.value, cst.Dict) and config.value.elements:
        existing = config.value
        present = _literal_keys(existing)
        new = [(k, v) for k, v in new if k not in present]
        if not new:
            return existing
        kept = list(existing.elements)
        between = _separator(kept)
        trailing = kept[-1].comma
        kept[-1] = kept[-1].with_changes(comma=between)
        added = [cst.DictElement(_string(k), v, comma=between) for k, v in new]
        added[-1] = added[-1].with_changes(comma=trailing)
        return existing.with_changes(elements=[*kept, *added])
    elements: list[cst.BaseDictElement] = []
    if config is not None and not is_none(config) and not isinstance(config.value, cst.Dict):
        # (a literal {} adds nothing)
        elements.append(cst.StarredDictElement(config.value))
    elements.extend(cst.DictElement(_string(k), v) for k, v in new)
    if line is None or not elements:
        return cst.Dict(elements)
    deeper = line.with_changes(last_line=cst.SimpleWhitespace(line.last_line.value + "    "))
    elements = [e.with_changes(comma=cst.Comma(whitespace_after=deeper)) for e in elements]
    elements[-1] = elements[-1].with_changes(comma=cst.Comma(whitespace_after=line))
    return cst.Dict(elements, lbrace=cst.LeftCurlyBrace(whitespace_after=deeper))


class KafkaRule(Rule):
    """Rewrite Java specs of Storm's KafkaSpout/KafkaBolt to the native connectors."""

    RULE_ID = "kafka"
    DESCRIPTION = ("JavaSpout/JavaBolt specs naming Storm's KafkaSpout/KafkaBolt become "
                   "compat.connectors.kafka KafkaSpout/KafkaSink specs.")
    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        names = {
            q.name for q in self.get_metadata(QualifiedNameProvider, original_node.func, set())
        }
        role = java_role(names)
        if role is None:
            return updated_node
        class_name = spec_class_name(original_node, role)
        if class_name is None or not is_storm_kafka(class_name, role):
            return updated_node
        bound = bind_arguments(updated_node, SPOUT_PARAMS if role == "spout" else BOLT_PARAMS)
        assert bound is not None  # spec_class_name bound the same arguments
        target = "KafkaSpout" if role == "spout" else "KafkaSink"
        origin = (KAFKA_SPOUTS if role == "spout" else KAFKA_BOLTS)[class_name]
        try:
            mapping = map_spout(bound) if role == "spout" else map_sink(bound)
        except Unmappable as exc:
            self.record(original_node, Level.ERROR,
                        f"{class_name} ({origin}) not rewritten: {exc}",
                        old=self.code_of(original_node), manual=self._by_hand(role, target))
            return updated_node
        new_node = self._native_call(updated_node, bound, target, role, mapping)
        AddImportsVisitor.add_needed_import(self.context, TARGET_MODULE, target)
        RemoveImportsVisitor.remove_unused_import_by_node(self.context, original_node.func)
        message = f"{class_name} ({origin}) became {TARGET_MODULE}.{target}"
        if mapping.assumed:
            message += "; assumed " + ", ".join(mapping.assumed)
        if mapping.notes:
            message += "; " + "; ".join(mapping.notes)
        manual = ""
        if mapping.level is not Level.INFO:
            check = ("check the Java class really took these arguments in this meaning; "
                     if mapping.assumed else "")
            manual = check + (SPOUT_SETTINGS_NOTE if role == "spout" else SINK_SETTINGS_NOTE)
        self.record(original_node, mapping.level, message, old=self.code_of(original_node),
                    new=self.code_of(new_node), manual=manual)
        return new_node

    @staticmethod
    def _by_hand(role: str, target: str) -> str:
        settings = (f"'{SERVERS}': 'HOST:PORT', '{TOPICS}': ['TOPIC']" if role == "spout"
                    else f"'{SERVERS}': 'HOST:PORT', '{SINK_TOPIC}': 'TOPIC'")
        inputs = "inputs=..., " if role == "bolt" else ""
        return (f"write it as {target}.spec(name=..., {inputs}par=..., config={{{settings}}}) "
                f"with `from {TARGET_MODULE} import {target}` (keys in docs/kafka.md), then run "
                "heron-migrate again")

    @staticmethod
    def _native_call(node: cst.Call, bound: dict[str, cst.Arg], target: str, role: str,
                     mapping: Mapping) -> cst.Call:
        """``Target.spec(name=..., [inputs=...,] par=..., config=...)``, laid out like the
        original call (its first separator and closing whitespace are reused)."""
        carried = ("name", "inputs", "par") if role == "bolt" else ("name", "par")
        values: list[tuple[str, cst.BaseExpression]] = [
            (key, bound[key].value) for key in carried if key in bound]
        first_comma = node.args[0].comma if node.args else cst.MaybeSentinel.DEFAULT
        last_comma = node.args[-1].comma if node.args else cst.MaybeSentinel.DEFAULT
        separator = first_comma if isinstance(first_comma, cst.Comma) else cst.MaybeSentinel.DEFAULT
        line = None
        if isinstance(separator, cst.Comma) and isinstance(separator.whitespace_after,
                                                           cst.ParenthesizedWhitespace):
            line = separator.whitespace_after
        values.append(("config", _merge_config(bound.get("config"), mapping.settings, line)))
        equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                whitespace_after=cst.SimpleWhitespace(""))
        args = [cst.Arg(value=value, keyword=cst.Name(key), equal=equal, comma=separator)
                for key, value in values]
        args[-1] = args[-1].with_changes(comma=last_comma)
        return node.with_changes(func=cst.Attribute(cst.Name(target), cst.Name("spec")),
                                 args=args)
