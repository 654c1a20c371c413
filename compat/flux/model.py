"""What a Flux file says, as dataclasses: the definitions read from YAML (``*Def``) and
the spouts, bolts and streams they become (:class:`FluxComponent`, :class:`FluxStream`,
part of the public shape the CLI and the migrator read; ``topology.py`` holds the
topology itself)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import Where

__all__ = ["BeanDef", "FluxComponent", "FluxStream", "GroupingDef",
           "IncludeDef", "MethodCall", "Ref", "RefList", "StreamDef", "TopologyDef",
           "VertexDef"]


# -- definitions, as written -------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """``{ref: ID}``: the component of that id."""

    id: str
    where: Where


@dataclass(frozen=True)
class RefList:
    """``{reflist: [ID, ...]}``: a list of components."""

    ids: tuple[str, ...]
    where: Where


@dataclass
class MethodCall:
    """A ``configMethods`` entry, or a ``properties`` entry as the setter Flux calls."""

    name: str
    args: list[Any]
    where: Where
    #: the ``properties`` name when this call came from one (``firstPollOffsetStrategy``)
    property: str | None = None


@dataclass
class BeanDef:
    """A ``components`` entry (and the common part of spouts and bolts)."""

    id: str
    class_name: str
    where: Where
    constructor_args: list[Any] = field(default_factory=list)
    calls: list[MethodCall] = field(default_factory=list)
    factory: str | None = None
    factory_args: list[Any] = field(default_factory=list)


@dataclass
class VertexDef(BeanDef):
    """A ``spouts`` or ``bolts`` entry."""

    role: str = "bolt"  # "spout" | "bolt"
    parallelism: int = 1
    config: dict[str, Any] = field(default_factory=dict)


@dataclass
class GroupingDef:
    type: str
    where: Where
    stream_id: str = "default"
    args: list[str] | None = None
    custom_class: str | None = None


@dataclass
class StreamDef:
    name: str | None
    source: str
    target: str
    grouping: GroupingDef
    where: Where
    from_where: Where
    to_where: Where


@dataclass
class IncludeDef:
    file: str
    where: Where
    resource: bool = False
    override: bool = False


@dataclass
class TopologyDef:
    """One file's definitions; includes are merged into the including file's."""

    file: str
    name: str | None = None
    name_where: Where | None = None
    config: dict[str, Any] = field(default_factory=dict)
    components: dict[str, BeanDef] = field(default_factory=dict)
    spouts: dict[str, VertexDef] = field(default_factory=dict)
    bolts: dict[str, VertexDef] = field(default_factory=dict)
    streams: list[StreamDef] = field(default_factory=list)
    includes: list[IncludeDef] = field(default_factory=list)


# -- the topology they become -------------------------------------------------------------
@dataclass
class FluxComponent:
    """A spout or bolt of a Flux topology, mapped to what runs here.

    ``kind`` is ``shell`` (a multilang subprocess: ``command``), ``kafka_spout`` /
    ``kafka_sink`` (the native connectors, configured by ``settings``, the
    ``heron.connectors.kafka.*`` keys) or ``python`` (a ``module:Class`` className, an
    extension of ours). ``outputs`` maps each declared stream to its fields.
    """

    id: str
    role: str  # "spout" | "bolt"
    kind: str
    class_name: str
    parallelism: int
    line: int
    file: str
    command: list[str] | None = None
    outputs: dict[str, list[str]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    #: ``module:Class`` of the native class a kafka or python component is built from
    class_path: str | None = None


@dataclass
class FluxStream:
    """A ``streams`` entry: ``source`` -> ``target`` on ``stream_id``; ``grouping`` is
    Flux's type name (``SHUFFLE``, ``FIELDS``, ...), ``fields`` the FIELDS arguments."""

    source: str
    target: str
    grouping: str
    stream_id: str
    fields: list[str] | None
    line: int
    file: str
    name: str | None = None
