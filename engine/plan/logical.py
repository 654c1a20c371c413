"""The logical plan: what a topology is, independent of where its tasks run.

Both engines consume a ``LogicalPlan``; the Storm-API compiler
(``engine.plan.compiler``) and the Summingbird planner produce one. It is an
immutable view with the same content as the protobuf ``heron.proto.api.Topology``
stored in the state manager, so the engines never read the protobuf by hand
(``to_proto``/``from_proto`` and ``to_bytes``/``from_bytes`` convert).

A ``LogicalPlan`` is valid by construction: the constructor runs every check in
``engine.plan.validation`` and raises a ``PlanningError`` naming the offending
component, stream and field. Code holding a plan never re-checks it.

Configuration values are normalized through JSON when a definition is built
(tuples become lists, keys become strings), because Storm configuration is JSON on
the wire; a value JSON cannot represent is an ``InvalidConfigError`` at once rather
than a surprise in another process. The mappings are read-only; nested values are
plain JSON objects owned by the plan, so copy them before mutating.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import DuplicateComponentError, InvalidConfigError

if TYPE_CHECKING:
    from engine.messages import topology_pb2

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

SPOUT = "spout"
BOLT = "bolt"
KINDS = (SPOUT, BOLT)
DEFAULT_STREAM = "default"
#: Grouping names used by InputDef.grouping. "global" is Heron's LOWEST; "none"
#: behaves as shuffle; "custom" runs a Python grouping class named by
#: InputDef.custom_grouping.
GROUPINGS = ("shuffle", "fields", "all", "global", "none", "direct", "local_or_shuffle", "custom")


class FrozenMap(Mapping[str, Any]):
    """A read-only mapping that, unlike ``MappingProxyType``, pickles and copies.

    Plans cross process boundaries (multiprocessing, the storm engine's threads
    handing definitions around), so their mappings must survive pickling.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> None:
        object.__setattr__(self, "_data", dict(data))

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FrozenMap is read-only")

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        return (FrozenMap, (self._data,))

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"


def json_config(config: Mapping[str, Any] | None, where: str, *, component: str | None = None) -> FrozenMap:
    """Normalize a configuration mapping through JSON, naming the bad key on failure."""
    if config is None:
        return FrozenMap()
    if not isinstance(config, Mapping):
        raise InvalidConfigError(
            f"{where}: configuration must be a dict of Storm config keys; given {config!r}.",
            component=component,
        )
    normalized = {}
    for key, value in config.items():
        if not isinstance(key, str):
            raise InvalidConfigError(
                f"{where}: config key {key!r} is not a string; Storm config keys are "
                f"dotted strings such as 'topology.message.timeout.secs'.",
                component=component,
            )
        try:
            normalized[key] = json.loads(json.dumps(value))
        except (TypeError, ValueError) as exc:
            raise InvalidConfigError(
                f"{where}: config key {key!r} has a value JSON cannot represent "
                f"({exc}); Storm config values must be JSON (str, number, bool, None, "
                f"list, dict).",
                component=component,
            ) from None
    return FrozenMap(normalized)


@dataclass(frozen=True)
class StreamDef:
    """One output stream of a component (Storm's StreamInfo)."""

    component: str
    name: str
    fields: tuple[str, ...]
    direct: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "direct", bool(self.direct))


@dataclass(frozen=True)
class InputDef:
    """One subscription of a bolt: a source stream and how it is split across tasks.

    ``grouping`` is one of ``GROUPINGS``; ``fields`` is set only for "fields".
    ``custom_grouping`` is "module:QualName" of a Python grouping class, set only
    for "custom" (Storm's Java custom groupings cannot run here and are rejected
    by the compiler).
    """

    source: str
    stream: str = DEFAULT_STREAM
    grouping: str = "shuffle"
    fields: tuple[str, ...] = ()
    custom_grouping: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))


@dataclass(frozen=True)
class ComponentDef:
    """A spout or bolt: how many tasks, what it emits, what it consumes, what code runs.

    ``python_class`` ("module:QualName") lets an engine run the component in
    process; ``shell`` ((command, script)) lets it run the component over Storm's
    multi-lang protocol. An unchanged streamparse component has both (its shell
    command is ``streamparse_run``); a plain ShellBolt has only ``shell``.
    ``config`` is the component's own configuration (Storm's json_conf).
    """

    name: str
    kind: str
    parallelism: int
    config: Mapping[str, Any] = field(default_factory=FrozenMap)
    outputs: Mapping[str, StreamDef] = field(default_factory=FrozenMap)
    inputs: tuple[InputDef, ...] = ()
    python_class: str | None = None
    shell: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        where = f"{self.kind} {self.name!r}"
        object.__setattr__(self, "config", json_config(self.config, where, component=self.name))
        object.__setattr__(self, "outputs", FrozenMap(self.outputs))
        object.__setattr__(self, "inputs", tuple(self.inputs))
        if self.shell is not None:
            object.__setattr__(self, "shell", tuple(self.shell))

    @property
    def is_spout(self) -> bool:
        return self.kind == SPOUT

    @property
    def is_bolt(self) -> bool:
        return self.kind == BOLT


class LogicalPlan:
    """A validated topology: its name, its configuration and its components in order."""

    __slots__ = ("_name", "_config", "_components", "_consumers", "_key_field_sets")

    def __init__(
        self,
        name: str,
        components: Iterable[ComponentDef],
        config: Mapping[str, Any] | None = None,
    ) -> None:
        from .validation import validate_components

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

    def consumers(self, component: str, stream: str = DEFAULT_STREAM) -> list[tuple[ComponentDef, InputDef]]:
        """The bolts subscribed to a stream, with their subscriptions, in definition order."""
        return list(self._consumers.get((component, stream), ()))

    def key_field_sets(self, component: str, stream: str = DEFAULT_STREAM) -> tuple[tuple[str, ...], ...]:
        """The distinct fields-grouping field lists on a stream, in consumer order.

        An emitting instance hashes each tuple once per list, in this order, into
        TupleBatch.key_hashes (key_hash_width = len(result)); routers read the hash
        at the index of their consumer's field list.
        """
        return self._key_field_sets.get((component, stream), ())

    def to_proto(self, *, topology_id: str | None = None) -> topology_pb2.Topology:
        """The protobuf Topology (state RUNNING); ``topology_id`` defaults to the name."""
        from .proto_codec import plan_to_proto

        return plan_to_proto(self, topology_id=topology_id)

    @classmethod
    def from_proto(cls, message: topology_pb2.Topology) -> LogicalPlan:
        """Read a protobuf Topology back; raises MalformedPlanError or a validation error."""
        from .proto_codec import plan_from_proto

        return plan_from_proto(message)

    def to_bytes(self, *, topology_id: str | None = None) -> bytes:
        return self.to_proto(topology_id=topology_id).SerializeToString(deterministic=True)

    @classmethod
    def from_bytes(cls, data: bytes) -> LogicalPlan:
        from .proto_codec import plan_from_bytes

        return plan_from_bytes(data)

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
