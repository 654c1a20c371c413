"""The logical plan: what a topology is, independent of where its tasks run.

Both engines consume a ``LogicalPlan``; the Storm-API compiler
(``engine.common.plan.compiler``) and the Summingbird planner produce one. It is an
immutable view with the same content as the protobuf ``heron.proto.api.Topology``
stored in the state manager, so the engines never read the protobuf by hand
(``to_proto``/``from_proto`` and ``to_bytes``/``from_bytes`` convert).

A ``LogicalPlan`` is valid by construction: the constructor runs every check in
``engine.common.plan.validation`` and raises a ``PlanningError`` naming the offending
component, stream and field. Code holding a plan never re-checks it.

The parts (``ComponentDef``, ``StreamDef``, ``InputDef``) are in
``engine.common.plan.definitions``, the names and keys in ``engine.common.plan.constants``, and the
protobuf mapping in ``engine.common.plan.proto_codec``; all are importable from here.

Configuration values are normalized through JSON when a definition is built
(tuples become lists, keys become strings), because Storm configuration is JSON on
the wire; a value JSON cannot represent is an ``InvalidConfigError`` at once rather
than a surprise in another process. The mappings are read-only; nested values are
plain JSON objects owned by the plan, so copy them before mutating.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.messages import topology_pb2

from .constants import BOLT, DEFAULT_STREAM, GROUPINGS, KINDS, SPOUT
from .definitions import ComponentDef, FrozenMap, InputDef, StreamDef, json_config
from .errors import DuplicateComponentError
from .proto_codec import parse_topology, topology_from_proto, topology_to_proto
from .validation import validate_components

__all__ = [
    "BOLT",
    "DEFAULT_STREAM",
    "GROUPINGS",
    "KINDS",
    "SPOUT",
    "ComponentDef",
    "FrozenMap",
    "InputDef",
    "LogicalPlan",
    "StreamDef",
]


class LogicalPlan:
    """A validated topology: its name, its configuration and its components in order."""

    __slots__ = ("_name", "_config", "_components", "_consumers", "_key_field_sets")

    def __init__(
        self,
        name: str,
        components: Iterable[ComponentDef],
        config: Mapping[str, Any] | None = None,
    ) -> None:
        ordered: dict[str, ComponentDef] = {}
        for component in components:
            if component.name in ordered:
                raise DuplicateComponentError(
                    f"topology {name!r} has two components named {component.name!r}; component "
                    f"names must be unique. Rename one of them (spec(name=...)).",
                    component=component.name,
                )
            ordered[component.name] = component
        validate_components(name, ordered)
        consumers: dict[tuple[str, str], list[tuple[ComponentDef, InputDef]]] = {}
        for component in ordered.values():
            for subscription in component.inputs:
                key = (subscription.source, subscription.stream)
                consumers.setdefault(key, []).append((component, subscription))
        self._name = name
        self._config = json_config(config, f"topology {name!r}")
        self._consumers = {key: tuple(value) for key, value in consumers.items()}
        self._key_field_sets = {
            key: tuple(dict.fromkeys(i.fields for _, i in value if i.grouping == "fields"))
            for key, value in consumers.items()
        }
        self._components = FrozenMap(ordered)  # last: from here on the plan is immutable

    @property
    def name(self) -> str:
        return self._name

    @property
    def config(self) -> Mapping[str, Any]:
        """The topology-wide configuration (already merged by the caller)."""
        return self._config

    @property
    def components(self) -> Mapping[str, ComponentDef]:
        """Every component, in definition order."""
        return self._components

    @property
    def spouts(self) -> Mapping[str, ComponentDef]:
        return FrozenMap((n, c) for n, c in self._components.items() if c.kind == SPOUT)

    @property
    def bolts(self) -> Mapping[str, ComponentDef]:
        return FrozenMap((n, c) for n, c in self._components.items() if c.kind == BOLT)

    def consumers(self, component: str,
                  stream: str = DEFAULT_STREAM) -> list[tuple[ComponentDef, InputDef]]:
        """The bolts subscribed to a stream, with their subscriptions, in definition order."""
        return list(self._consumers.get((component, stream), ()))

    def key_field_sets(self, component: str,
                       stream: str = DEFAULT_STREAM) -> tuple[tuple[str, ...], ...]:
        """The distinct fields-grouping field lists on a stream, in consumer order.

        An emitting instance hashes each tuple once per list, in this order, into
        TupleBatch.key_hashes (key_hash_width = len(result)); routers read the hash
        at the index of their consumer's field list.
        """
        return self._key_field_sets.get((component, stream), ())

    def to_proto(self, *, topology_id: str | None = None) -> topology_pb2.Topology:
        """The protobuf Topology (state RUNNING); ``topology_id`` defaults to the name."""
        return topology_to_proto(self._name, self._config, self._components.values(),
                                 topology_id=topology_id)

    @classmethod
    def from_proto(cls, message: topology_pb2.Topology) -> LogicalPlan:
        """Read a protobuf Topology back; raises MalformedPlanError or a validation error."""
        name, components, config = topology_from_proto(message)
        return cls(name, components, config)

    def to_bytes(self, *, topology_id: str | None = None) -> bytes:
        return self.to_proto(topology_id=topology_id).SerializeToString(deterministic=True)

    @classmethod
    def from_bytes(cls, data: bytes) -> LogicalPlan:
        """Parse serialized Topology bytes (as stored at <root>/topologies/<name>)."""
        return cls.from_proto(parse_topology(data))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LogicalPlan):
            return NotImplemented
        return (
            self._name == other._name
            and self._config == other._config
            and list(self._components.items()) == list(other._components.items())
        )

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return (LogicalPlan, (self._name, tuple(self._components.values()), dict(self._config)))

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, "_components"):
            raise AttributeError("LogicalPlan is immutable")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        parts = ", ".join(f"{c.name}({c.kind} x{c.parallelism})" for c in self._components.values())
        return f"LogicalPlan({self._name!r}: {parts})"
