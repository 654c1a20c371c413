"""Conversion between a plan's content and the protobuf ``heron.proto.api.Topology``.

This module maps a topology's name, configuration and component definitions
(:mod:`engine.common.plan.definitions`) to and from the message; ``LogicalPlan.to_proto``,
``from_proto`` and ``from_bytes`` (:mod:`engine.common.plan.logical`) call it and validate what
it reads, so the codec needs no plan class and the plan no protobuf details.

The mapping follows Heron where Heron has the concept: parallelism lives in the
component config under ``topology.component.parallelism``, global grouping is
``LOWEST``, Python components are ``PYTHON_CLASS_NAME``. Our extensions
(local-or-shuffle, direct streams, shell components, JSON config values, component
order) are the fields numbered 100 and up in ``proto/heron/proto/topology.proto``.
Reading accepts Heron-written plain-string config values as strings.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf.message import DecodeError

from engine.messages import topology_pb2 as pb

from .constants import BOLT, PARALLELISM_CONFIG_KEY, SPOUT
from .definitions import ComponentDef, InputDef, StreamDef
from .errors import MalformedPlanError

__all__ = ["parse_topology", "topology_from_proto", "topology_to_proto"]

_GROUPING_TO_PROTO = {
    "shuffle": pb.SHUFFLE,
    "fields": pb.FIELDS,
    "all": pb.ALL,
    "global": pb.LOWEST,
    "none": pb.NONE,
    "direct": pb.DIRECT,
    "local_or_shuffle": pb.LOCAL_OR_SHUFFLE,
    "custom": pb.CUSTOM,
}
_GROUPING_FROM_PROTO = {value: key for key, value in _GROUPING_TO_PROTO.items()}


def topology_to_proto(name: str, config: Mapping[str, Any], components: Iterable[ComponentDef],
                      *, topology_id: str | None = None) -> pb.Topology:
    """The Topology message, in state RUNNING, of a plan's name, configuration and
    components (in order); ``topology_id`` defaults to the name."""
    message = pb.Topology(id=topology_id or name, name=name, state=pb.RUNNING)
    _write_config(message.topology_config, config)
    for component in components:
        message.component_order.append(component.name)
        if component.kind == SPOUT:
            spout = message.spouts.add()
            _write_component(spout.comp, component)
            _write_outputs(spout.outputs, component)
        else:
            bolt = message.bolts.add()
            _write_component(bolt.comp, component)
            _write_outputs(bolt.outputs, component)
            for subscription in component.inputs:
                _write_input(bolt.inputs.add(), subscription)
    return message


def topology_from_proto(message: pb.Topology) -> tuple[str, list[ComponentDef], dict[str, Any]]:
    """A Topology message's name, components (in order) and configuration, not yet
    checked against each other (``LogicalPlan.from_proto`` validates them)."""
    if not message.name:
        raise MalformedPlanError("the Topology message has no name; it is not a stored plan.")
    config = _read_config(message.topology_config, f"topology {message.name!r}")
    definitions = [_read_component(s.comp, SPOUT, s.outputs, ()) for s in message.spouts]
    for bolt in message.bolts:
        inputs = tuple(_read_input(bolt.comp.name, i) for i in bolt.inputs)
        definitions.append(_read_component(bolt.comp, BOLT, bolt.outputs, inputs))
    if message.component_order:
        order = list(message.component_order)
        if sorted(order) != sorted(d.name for d in definitions):
            raise MalformedPlanError(
                f"topology {message.name!r}: component_order {order} does not list exactly "
                f"the components defined ({[d.name for d in definitions]})."
            )
        position = {name: index for index, name in enumerate(order)}
        definitions.sort(key=lambda definition: position[definition.name])
    return message.name, definitions, config


def parse_topology(data: bytes) -> pb.Topology:
    """Parse serialized Topology bytes (as stored at <root>/topologies/<name>)."""
    message = pb.Topology()
    try:
        message.ParseFromString(data)
    except DecodeError as exc:
        raise MalformedPlanError(
            f"the bytes are not a serialized heron.proto.api.Topology ({exc})."
        ) from None
    return message


# -- writing -----------------------------------------------------------------------


def _write_config(target: pb.Config, config: Mapping[str, Any]) -> None:
    for key, value in config.items():
        target.kvs.add(key=key, value=json.dumps(value), type=pb.JSON_VALUE)


def _write_component(target: pb.Component, component: ComponentDef) -> None:
    target.name = component.name
    _write_config(target.config, component.config)
    target.config.kvs.add(
        key=PARALLELISM_CONFIG_KEY, value=json.dumps(component.parallelism), type=pb.JSON_VALUE
    )
    if component.python_class:
        target.spec = pb.PYTHON_CLASS_NAME
        target.class_name = component.python_class
    else:
        target.spec = pb.SHELL_COMMAND
    if component.shell:
        command, script = component.shell
        target.shell.execution_command = command
        target.shell.script = script


def _write_outputs(target: Any, component: ComponentDef) -> None:
    for stream in component.outputs.values():
        output = target.add(direct=stream.direct)
        output.stream.id = stream.name
        output.stream.component_name = component.name
        for field_name in stream.fields:
            output.schema.keys.add(key=field_name, type=pb.OBJECT)


def _write_input(target: pb.InputStream, subscription: InputDef) -> None:
    target.stream.id = subscription.stream
    target.stream.component_name = subscription.source
    target.gtype = _GROUPING_TO_PROTO[subscription.grouping]
    if subscription.grouping == "fields":
        for field_name in subscription.fields:
            target.grouping_fields.keys.add(key=field_name, type=pb.OBJECT)
    if subscription.custom_grouping:
        target.type = pb.PYTHON_OBJECT
        target.custom_grouping_object = subscription.custom_grouping.encode("utf-8")


# -- reading -----------------------------------------------------------------------


def _read_config(config: pb.Config, where: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for kv in config.kvs:
        if kv.HasField("serialized_value"):
            raise MalformedPlanError(
                f"{where}: config key {kv.key!r} holds a serialized Java/Python object; only "
                f"JSON and plain string values can be read."
            )
        if kv.type == pb.JSON_VALUE:
            try:
                values[kv.key] = json.loads(kv.value)
            except ValueError as exc:
                raise MalformedPlanError(
                    f"{where}: config key {kv.key!r} is marked JSON but is not ({exc})."
                ) from None
        else:  # Heron's STRING_VALUE, or unset: a plain string
            values[kv.key] = kv.value
    return values


def _read_component(
    comp: pb.Component, kind: str, outputs: Any, inputs: tuple[InputDef, ...]
) -> ComponentDef:
    where = f"{kind} {comp.name!r}"
    config = _read_config(comp.config, where)
    parallelism = config.pop(PARALLELISM_CONFIG_KEY, 1)
    if isinstance(parallelism, str) and parallelism.isdigit():  # Heron writes a plain string
        parallelism = int(parallelism)
    if comp.spec == pb.PYTHON_CLASS_NAME:
        python_class = comp.class_name or None
    elif comp.spec == pb.SHELL_COMMAND:
        python_class = None
    else:
        raise MalformedPlanError(
            f"{where} is a {pb.ComponentObjectSpec.Name(comp.spec)} component; only Python "
            f"(PYTHON_CLASS_NAME) and shell (SHELL_COMMAND) components can run here."
        )
    shell = (comp.shell.execution_command, comp.shell.script) if comp.HasField("shell") else None
    streams = {}
    for output in outputs:
        name = output.stream.id
        streams[name] = StreamDef(
            component=comp.name,
            name=name,
            fields=tuple(key.key for key in output.schema.keys),
            direct=output.direct,
        )
    return ComponentDef(
        name=comp.name,
        kind=kind,
        parallelism=parallelism,
        config=config,
        outputs=streams,
        inputs=inputs,
        python_class=python_class,
        shell=shell,
    )


def _read_input(bolt: str, message: pb.InputStream) -> InputDef:
    if not message.HasField("gtype"):
        # Also what a grouping value this version does not know looks like: proto2
        # enums are closed, so the parser moves the value to the unknown fields.
        raise MalformedPlanError(
            f"bolt {bolt!r}: its input from stream {message.stream.id!r} of "
            f"{message.stream.component_name!r} has no grouping this version can read.",
            component=bolt,
            stream=message.stream.id,
        )
    grouping = _GROUPING_FROM_PROTO[message.gtype]
    custom = None
    if grouping == "custom":
        if message.type != pb.PYTHON_OBJECT:
            raise MalformedPlanError(
                f"bolt {bolt!r} subscribes to stream {message.stream.id!r} of "
                f"{message.stream.component_name!r} with a "
                f"{pb.CustomGroupingObjectType.Name(message.type)} custom grouping; only Python "
                f"grouping classes can run here.",
                component=bolt,
                stream=message.stream.id,
            )
        custom = message.custom_grouping_object.decode("utf-8")
    return InputDef(
        source=message.stream.component_name,
        stream=message.stream.id,
        grouping=grouping,
        fields=tuple(key.key for key in message.grouping_fields.keys),
        custom_grouping=custom,
    )
