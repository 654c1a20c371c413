"""The ``Topology`` base class: a class body of specs becomes a checked topology.

As in streamparse, the work happens when the class statement runs, so a topology file
that imports cleanly is a valid topology. The metaclass names specs after their
attributes, checks the wiring, and sets the class attributes the CLI and the planner
read: ``specs`` (definition order), ``thrift_spouts``, ``thrift_bolts``,
``thrift_topology`` and ``config``.

A topology may mix specs of both DSLs: streamparse's specs (a real streamparse ``Bolt``'s
``spec()``) are taken as ours, and ours go into a ``streamparse.Topology`` (``interop``).
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar

import simplejson as json

from .. import thrift
from ..thrift import Bolt, SpoutSpec, StormTopology, to_python_arg, union_field
from . import interop
from .component import (
    ComponentSpec,
    JavaBoltSpec,
    JavaSpoutSpec,
    ShellBoltSpec,
    ShellComponentSpec,
    ShellSpoutSpec,
    spec_types,
)
from .errors import InvalidTopologyKey, InvalidTopologyType, InvalidTopologyValue
from .stream import GlobalStreamId

__all__ = ["Topology", "TopologyType"]

_FLUX_SHELL_BOLT = "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
_FLUX_SHELL_SPOUT = "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"


def _bolt_specs() -> tuple[type, ...]:
    """Bolt spec classes: ours, and streamparse's when it is loaded."""
    return (*interop.accepted(JavaBoltSpec, "JavaBoltSpec"),
            *interop.accepted(ShellBoltSpec, "ShellBoltSpec"))


def _spout_specs() -> tuple[type, ...]:
    """Spout spec classes: ours, and streamparse's when it is loaded."""
    return (*interop.accepted(JavaSpoutSpec, "JavaSpoutSpec"),
            *interop.accepted(ShellSpoutSpec, "ShellSpoutSpec"))


def _component_classes() -> tuple[type, ...]:
    """The component base classes whose instances mean a forgotten ``.spec()``.

    Looked up in ``sys.modules`` rather than imported: if a module is not loaded, no
    instance of its classes can be in a class body, and importing the component
    modules from here would tie the DSL to the runtime.
    """
    classes = []
    for module_name in ("compat.storm_api.component", "pystorm.component"):
        module = sys.modules.get(module_name)
        component = getattr(module, "Component", None)
        if isinstance(component, type):
            classes.append(component)
    return tuple(classes)


def _collect_specs(topology: str, class_dict: dict[str, Any]) -> dict[str, ComponentSpec]:
    """Name the specs of a class body after their attributes and index them by name."""
    specs: dict[str, ComponentSpec] = {}
    component_classes = _component_classes()
    accepted = spec_types()
    for attr, value in class_dict.items():
        if isinstance(value, accepted):
            if value.name is None:
                value.name = attr
            if value.name in specs:
                raise InvalidTopologyValue(
                    f"Topology {topology}: duplicate component name {value.name!r} "
                    f"(attribute {attr!r}); give each spec its own name=."
                )
            specs[value.name] = value
        elif component_classes and isinstance(value, component_classes):
            raise InvalidTopologyType(
                f"Topology {topology}: attribute {attr!r} is a component instance, "
                f"{value!r}; a topology holds specs. Write "
                f"{attr} = {type(value).__name__}.spec(...)."
            )
    return specs


def _check_bolt(topology: str, spec: ComponentSpec) -> Bolt:
    if not spec.inputs:
        raise InvalidTopologyValue(
            f"Topology {topology}: {spec.component_cls.__name__} {spec.name!r} is a "
            "bolt and needs at least one input; pass inputs=[...] to its spec()."
        )
    return Bolt(bolt_object=spec.component_object, common=spec.common)


def _check_spout(topology: str, spec: ComponentSpec) -> SpoutSpec:
    if not spec.outputs:
        raise InvalidTopologyValue(
            f"Topology {topology}: {spec.component_cls.__name__} {spec.name!r} is a "
            "spout and needs at least one output; declare outputs = [...] on it."
        )
    return SpoutSpec(spout_object=spec.component_object, common=spec.common)


def _resolve_inputs(
    topology: str, spec: ComponentSpec, specs: dict[str, ComponentSpec]
) -> None:
    """Replace spec references in ``spec.inputs`` by names, and check fields groupings.

    A replaced key is a new ``GlobalStreamId`` re-inserted at the end, as streamparse
    does (its hash changes with its componentId); streamparse mutates the key object
    instead, which leaves a stale hash in any other bolt that shares it.
    """
    where = f"Topology {topology}: {spec.component_cls.__name__} {spec.name!r}"
    accepted = spec_types()
    for stream_id, grouping in list(spec.inputs.items()):
        source_id = stream_id.componentId
        source_name: str | None
        if isinstance(source_id, accepted):
            source_name = source_id.name
            del spec.inputs[stream_id]
            stream_id = GlobalStreamId(componentId=source_name, streamId=stream_id.streamId)
            spec.inputs[stream_id] = grouping
        elif source_id is None:  # a GlobalStreamId the user built without a componentId
            raise InvalidTopologyType(
                f"{where}: an input GlobalStreamId has componentId None; name the "
                "source component."
            )
        else:  # a name; anything else names no component, as specs.get would find
            source_name = source_id if isinstance(source_id, str) else None
        source = None if source_name is None else specs.get(source_name)
        if source is None:
            raise InvalidTopologyKey(
                f"{where}: input from {stream_id.componentId!r}, which is not a "
                f"component of this topology (components: {list(specs)})."
            )
        stream = source.outputs.get(stream_id.streamId)
        if stream is None:
            raise InvalidTopologyKey(
                f"{where}: input from stream {stream_id.streamId!r} of "
                f"{source.name!r}, which declares only {list(source.outputs)}."
            )
        if grouping.fields is None:
            continue
        valid_fields = set(stream.output_fields)
        for field in grouping.fields:
            if field not in valid_fields:
                raise InvalidTopologyValue(
                    f"{where}: grouping field {field!r} is not an output field of the "
                    f"{source.name!r} {stream_id.streamId!r} stream "
                    f"(fields: {stream.output_fields})."
                )


class TopologyType(type):
    """Builds and checks a topology when a ``Topology`` subclass is defined."""

    def __new__(
        mcs, classname: str, bases: tuple[type, ...], class_dict: dict[str, Any]
    ) -> TopologyType:
        specs = _collect_specs(classname, class_dict)
        bolts: dict[str, Bolt] = {}
        spouts: dict[str, SpoutSpec] = {}
        bolt_specs, spout_specs = _bolt_specs(), _spout_specs()
        for name, spec in specs.items():
            if isinstance(spec, bolt_specs):
                bolts[name] = _check_bolt(classname, spec)
            elif isinstance(spec, spout_specs):
                spouts[name] = _check_spout(classname, spec)
            else:
                raise InvalidTopologyType(
                    f"Topology {classname}: {spec!r} is neither a spout nor a bolt spec; "
                    "build it with a Spout's or Bolt's spec()."
                )
            _resolve_inputs(classname, spec, specs)
        # streamparse exempts any class named "Topology" (its own base class), not only
        # the base; we keep that so the same files pass and fail.
        if classname != "Topology" and not spouts:
            raise InvalidTopologyValue(
                f"Topology {classname}: a topology needs at least one spout."
            )
        if "config" in class_dict:
            if not isinstance(class_dict["config"], dict):
                raise InvalidTopologyType(
                    f"Topology {classname}: config must be a dict of Storm settings; "
                    f"given {class_dict['config']!r}."
                )
        else:
            class_dict["config"] = {}
        class_dict["thrift_bolts"] = bolts
        class_dict["thrift_spouts"] = spouts
        class_dict["specs"] = list(specs.values())
        class_dict["thrift_topology"] = StormTopology(
            spouts=spouts, bolts=bolts, state_spouts={}
        )
        return super().__new__(mcs, classname, bases, class_dict)

    def __repr__(cls) -> str:
        return repr(getattr(cls, "thrift_topology", None))


def _spec_to_flux(spec: ComponentSpec) -> dict[str, Any]:
    """One Flux component entry, as ``sparse run`` writes it."""
    flux: dict[str, Any] = {"id": spec.name, "constructorArgs": []}
    if not isinstance(spec, interop.accepted(ShellComponentSpec, "ShellComponentSpec")):
        if spec.component_object.serialized_java is not None:
            raise InvalidTopologyType(
                f"{spec.name!r}: Flux cannot describe a component given as serialized "
                "Java; use full_class_name= and args_list=."
            )
        java_object = spec.component_object.java_object
        # not serialized Java, so named by class (JavaComponentSpec sets one of the two)
        assert java_object is not None
        flux["className"] = java_object.full_class_name
        flux["constructorArgs"] = [to_python_arg(arg) for arg in java_object.args_list]
        return flux
    shell_bolt = isinstance(spec, interop.accepted(ShellBoltSpec, "ShellBoltSpec"))
    flux["className"] = _FLUX_SHELL_BOLT if shell_bolt else _FLUX_SHELL_SPOUT
    shell = spec.component_object.shell
    assert shell is not None  # a shell spec's component object is its command
    flux["constructorArgs"].append([shell.execution_command, shell.script])
    if not spec.outputs:
        flux["constructorArgs"].append(["NONE_BUT_FLUX_WANTS_SOMETHING_HERE"])
    for stream, info in spec.outputs.items():
        if stream == "default":
            flux["constructorArgs"].append(info.output_fields)
        else:
            flux.setdefault("configMethods", []).append(
                {"name": "setNamedStream", "args": [stream, info.output_fields]}
            )
    flux["parallelism"] = spec.par
    config_methods = flux.setdefault("configMethods", [])
    for key, value in json.loads(spec.config).items():
        config_methods.append({"name": "addComponentConfig", "args": [key, value]})
    return flux


def _stream_to_flux(
    spec: ComponentSpec, stream_id: thrift.GlobalStreamId, grouping: thrift.Grouping
) -> dict[str, Any]:
    """One Flux stream entry: a subscription of ``spec`` with its grouping."""
    kind, value = union_field(grouping)
    assert kind is not None  # _sanitize_inputs took only groupings, each of one kind
    flux_grouping: dict[str, Any] = {"streamId": stream_id.streamId, "type": kind.upper()}
    if kind == "fields":
        if value:
            flux_grouping["args"] = value
        else:
            flux_grouping["type"] = "GLOBAL"
    elif kind == "custom_object":
        flux_grouping["type"] = "CUSTOM"
        flux_grouping["customClass"] = {
            "className": value.full_class_name,
            "constructorArgs": [to_python_arg(arg) for arg in value.args_list],
        }
    return {"from": stream_id.componentId, "to": spec.name, "grouping": flux_grouping}


class Topology(metaclass=TopologyType):
    """Subclass it and assign specs as class attributes to declare a topology."""

    # set by TopologyType on every Topology class (annotations only: the metaclass
    # reads the class body, where a value here would be taken for the user's)
    specs: ClassVar[list[ComponentSpec]]
    thrift_bolts: ClassVar[dict[str, Bolt]]
    thrift_spouts: ClassVar[dict[str, SpoutSpec]]
    thrift_topology: ClassVar[StormTopology]
    config: ClassVar[dict[str, Any]]

    @classmethod
    def to_flux_dict(cls, name: str) -> dict[str, Any]:
        """The topology as a Flux YAML document (a dict), identical to streamparse's.

        Kept so a project can still be run on a real Storm with Flux, and so the two
        DSLs can be compared through one rendering.
        """
        flux: dict[str, Any] = {"name": name, "bolts": [], "spouts": [], "streams": []}
        bolt_specs = _bolt_specs()
        for spec in cls.specs:
            if isinstance(spec, bolt_specs):
                flux["bolts"].append(_spec_to_flux(spec))
                for stream_id, grouping in spec.inputs.items():
                    flux["streams"].append(_stream_to_flux(spec, stream_id, grouping))
            else:
                flux["spouts"].append(_spec_to_flux(spec))
        return {key: value for key, value in flux.items() if value}
