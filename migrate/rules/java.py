"""What the rules know about Java components in streamparse code, in one place.

``unsupported`` reports every Java spec and ``kafka`` rewrites the ones naming Storm's
Kafka classes; both must agree on which calls are Java specs and on which class a spec
names, or a Kafka spout would be reported twice (or not at all), so the names and the
argument binding live here rather than in either rule.
"""

from __future__ import annotations

import libcst as cst

_MODULES = ("streamparse", "streamparse.storm", "streamparse.storm.bolt",
            "streamparse.storm.spout", "streamparse.bolt", "streamparse.spout",
            "compat.storm_api", "compat.storm_api.shell")
_GROUPING_MODULES = ("streamparse", "streamparse.dsl", "streamparse.dsl.stream",
                     "compat.storm_api", "compat.storm_api.dsl", "compat.storm_api.dsl.stream")

JAVA_SPOUTS = frozenset(f"{m}.JavaSpout" for m in _MODULES)
JAVA_BOLTS = frozenset(f"{m}.JavaBolt" for m in _MODULES)
JAVA_CLASSES = JAVA_SPOUTS | JAVA_BOLTS
JAVA_GROUPINGS = frozenset(f"{m}.Grouping.{g}" for m in _GROUPING_MODULES
                           for g in ("custom_object", "custom_serialized"))

# streamparse's JavaSpout.spec / JavaBolt.spec parameters, in positional order
# (streamparse.storm.spout.JavaSpout.spec, streamparse.storm.bolt.JavaBolt.spec).
SPOUT_PARAMS = ("name", "serialized_java", "full_class_name", "args_list", "par", "config",
                "outputs")
BOLT_PARAMS = ("name", "serialized_java", "full_class_name", "args_list", "inputs", "par",
               "config", "outputs")

# Storm's Kafka classes the ``kafka`` rule maps, with the Storm module that ships them
# (named in findings, so a reader knows which generation of the connector was meant).
KAFKA_SPOUTS = {
    "org.apache.storm.kafka.spout.KafkaSpout": "storm-kafka-client",
    "org.apache.storm.kafka.KafkaSpout": "storm-kafka (Storm 1.x, offsets in ZooKeeper)",
    "storm.kafka.KafkaSpout": "storm-kafka (Storm 0.9/0.10, offsets in ZooKeeper)",
}
KAFKA_BOLTS = {
    "org.apache.storm.kafka.bolt.KafkaBolt": "storm-kafka-client / storm-kafka",
    "storm.kafka.bolt.KafkaBolt": "storm-kafka (Storm 0.9/0.10)",
}


def java_role(qualified: set[str]) -> str | None:
    """``"spout"``/``"bolt"`` when one of ``qualified`` is ``JavaSpout.spec``/``JavaBolt.spec``."""
    for name in qualified:
        if not name.endswith(".spec"):
            continue
        owner = name[: -len(".spec")]
        if owner in JAVA_SPOUTS:
            return "spout"
        if owner in JAVA_BOLTS:
            return "bolt"
    return None


def bind_arguments(call: cst.Call, params: tuple[str, ...]) -> dict[str, cst.Arg] | None:
    """The call's arguments by parameter name, or None when they cannot be bound
    statically (``*args``/``**kwargs``, too many positionals, an unknown keyword)."""
    bound: dict[str, cst.Arg] = {}
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if position >= len(params):
                return None
            bound[params[position]] = arg
            position += 1
        elif arg.keyword.value in params and arg.keyword.value not in bound:
            bound[arg.keyword.value] = arg
        else:
            return None
    return bound


def literal_string(node: cst.BaseExpression | None) -> str | None:
    """The value of a plain (non-f, non-bytes) string literal, else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def spec_class_name(call: cst.Call, role: str) -> str | None:
    """The ``full_class_name`` a Java spec names as a literal, else None."""
    bound = bind_arguments(call, SPOUT_PARAMS if role == "spout" else BOLT_PARAMS)
    if bound is None or "full_class_name" not in bound:
        return None
    if not is_none(bound.get("serialized_java")):
        return None  # serialized Java wins in streamparse; its class is not readable
    return literal_string(bound["full_class_name"].value)


def is_none(arg: cst.Arg | None) -> bool:
    """True for an absent argument or a literal ``None`` (streamparse's default)."""
    return arg is None or (isinstance(arg.value, cst.Name) and arg.value.value == "None")


def is_storm_kafka(class_name: str | None, role: str) -> bool:
    """Whether a Java spec's class is one of Storm's Kafka classes the ``kafka`` rule owns."""
    return class_name in (KAFKA_SPOUTS if role == "spout" else KAFKA_BOLTS)
