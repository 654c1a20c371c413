"""Compile a Storm-API Topology class into a LogicalPlan.

Accepts a real ``streamparse.Topology`` subclass or a ``compat.storm_api``
one. Both DSLs leave the same spec objects behind (streamparse's shapes, which
mirror Storm's thrift structs), so the compiler reads them by attribute rather
than by type:

* ``Topology.specs``: the component specs, in definition order;
* ``spec.name``, ``spec.component_cls``, ``spec.par`` (int, ``{env: int}`` or None),
  ``spec.config`` (JSON text, Storm's json_conf);
* ``spec.outputs``: ``{stream: StreamInfo(output_fields, direct)}``;
* ``spec.inputs``: ``{GlobalStreamId(componentId, streamId): Grouping}``, where the
  Grouping is a thrift union with one of ``fields`` (``[]`` is global), ``shuffle``,
  ``all``, ``none``, ``direct``, ``local_or_shuffle``, ``custom_object``,
  ``custom_serialized`` (Java: rejected) or ``python_custom`` (ours: a Python grouping
  run by the emitting task, engine.common.grouping.custom) set;
* ``spec.component_object.shell``: ``(execution_command, script)`` for shell
  components, which include streamparse's Python components (``streamparse_run
  module.Class``); ``component_object.java_object`` / ``serialized_java`` for Java.

A spec is a spout or a bolt by its spec class (``*SpoutSpec`` / ``*BoltSpec``), or
failing that by the topology's ``thrift_spouts`` / ``thrift_bolts`` tables. Its class
is a Python component, runnable in process, when it has the kind's entry point
(``next_tuple`` for spouts, ``process`` for bolts); streamparse's bare
``ShellBolt``/``ShellSpout`` markers have none and run only through the shell.
Java components and Java custom groupings are rejected: the engines run Python.
A Python component whose class mixes in ``compat.storm_api.StatefulComponent`` gets
``topology.component.stateful: true`` in its config, so the roles that read only the
stored topology (``heron update``, the Health Manager) know it keeps state.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compat.storm_api.state import StatefulComponent
from engine.common.grouping.base import GroupingError
from engine.common.grouping.custom import load_custom_grouping

from .constants import RESCALE_CONFIG_KEY, STATEFUL_CONFIG_KEY
from .errors import (
    InvalidComponentError,
    InvalidConfigError,
    InvalidGroupingError,
    ParallelismEnvironmentError,
    UnsupportedComponentError,
    UnsupportedGroupingError,
)
from .logical import BOLT, SPOUT, ComponentDef, InputDef, LogicalPlan, StreamDef

__all__ = ["CompiledTopology", "compile_topology", "python_class_path", "resolve_parallelism"]

_ENTRY_POINTS = {SPOUT: "next_tuple", BOLT: "process"}
_GROUPING_ATTRIBUTES = (
    "fields",
    "shuffle",
    "all",
    "none",
    "direct",
    "local_or_shuffle",
    "custom_object",
    "custom_serialized",
    "python_custom",
)


@dataclass(frozen=True)
class CompiledTopology:
    """A plan plus the live classes behind it, for engines that run components in process.

    ``component_classes`` has an entry for every Python component, including classes
    that cannot be imported by their recorded path (defined in ``__main__`` or in a
    function); shell components have none.
    """

    plan: LogicalPlan
    component_classes: dict[str, type]


def compile_topology(
    topology_cls: type,
    *,
    name: str | None = None,
    env: str | None = None,
    config: Mapping[str, Any] | None = None,
) -> CompiledTopology:
    """Compile and validate ``topology_cls``; raise a PlanningError naming what is wrong.

    ``name`` defaults to the class name (the CLI passes the topology file's stem, as
    ``sparse`` does). ``env`` picks entries of ``par={env: n}`` dicts. ``config``,
    when given, is the fully merged topology configuration (config.json env options
    < Topology.config < command line, merged by the caller); otherwise
    ``topology_cls.config`` is used.
    """
    specs = getattr(topology_cls, "specs", None)
    if not isinstance(specs, (list, tuple)):
        raise TypeError(
            f"{topology_cls!r} is not a Topology class: it has no 'specs' list. Pass a "
            f"subclass of streamparse.Topology or compat.storm_api.Topology."
        )
    topology_name = name or topology_cls.__name__
    if config is None:
        config = getattr(topology_cls, "config", None) or {}
    components = []
    classes: dict[str, type] = {}
    for spec in specs:
        definition, component_cls = _compile_spec(spec, topology_cls, env)
        components.append(definition)
        if component_cls is not None:
            classes[definition.name] = component_cls
    plan = LogicalPlan(topology_name, components, config)
    return CompiledTopology(plan=plan, component_classes=classes)


def resolve_parallelism(component: str, par: Any, component_cls: Any, env: str | None) -> Any:
    """The parallelism for ``env``: ``par``, else the class's ``par``, else 1.

    streamparse quietly leaves a missing environment's parallelism unset (Storm
    then runs one task); here it is an error, because a production environment
    silently running one task is worse than a clear message.
    """
    if par is None:
        par = getattr(component_cls, "par", None)
    if par is None:
        return 1
    if isinstance(par, Mapping):
        envs = ", ".join(repr(key) for key in par) or "none"
        if env is None:
            raise ParallelismEnvironmentError(
                f"component {component!r} sets parallelism per environment ({dict(par)!r}), but "
                f"no environment was chosen. Choose one with -e ENV ({envs}).",
                component=component,
            )
        if env not in par:
            raise ParallelismEnvironmentError(
                f"component {component!r} sets parallelism per environment ({dict(par)!r}), "
                f"with no entry for environment {env!r}. Add {env!r}: N to its par dict, or "
                f"choose one of {envs} with -e.",
                component=component,
            )
        return par[env]
    return par


def python_class_path(cls: type) -> str:
    """``"module:QualName"``, recorded even when the path cannot be imported back."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _compile_spec(spec: Any, topology_cls: type,
                  env: str | None) -> tuple[ComponentDef, type | None]:
    name = getattr(spec, "name", None)
    if not isinstance(name, str) or not name:
        raise InvalidComponentError(
            f"a spec of {topology_cls.__name__} has no name ({spec!r}); assign it to a class "
            f"attribute of the Topology or pass spec(name=...)."
        )
    kind = _spec_kind(spec, name, topology_cls)
    component_cls = getattr(spec, "component_cls", None)
    component_object = getattr(spec, "component_object", None)
    _reject_java(kind, name, component_object)
    shell = _shell_of(component_object)
    python_cls = _python_class(kind, component_cls)
    if python_cls is None and shell is None:
        raise InvalidComponentError(
            f"{kind} {name!r} has neither a Python class with {_ENTRY_POINTS[kind]}() nor a "
            f"shell command; define it with {component_cls!r}.spec(...) of a Spout/Bolt class "
            f"or ShellSpout/ShellBolt.spec(command=..., script=...).",
            component=name,
        )
    config = _spec_config(kind, name, getattr(spec, "config", None))
    if python_cls is not None and issubclass(python_cls, StatefulComponent):
        # recorded for the roles that read only the stored topology (heron update)
        config = {**config, STATEFUL_CONFIG_KEY: True}
        if getattr(python_cls, "rescale_state", None) is not None:
            config = {**config, RESCALE_CONFIG_KEY: True}
    definition = ComponentDef(
        name=name,
        kind=kind,
        parallelism=resolve_parallelism(name, getattr(spec, "par", None), component_cls, env),
        config=config,
        outputs=_outputs(name, getattr(spec, "outputs", None)),
        inputs=tuple(
            _input(name, stream_id, grouping)
            for stream_id, grouping in (getattr(spec, "inputs", None) or {}).items()
        ),
        python_class=python_class_path(python_cls) if python_cls is not None else None,
        shell=shell,
    )
    return definition, python_cls


def _spec_kind(spec: Any, name: str, topology_cls: type) -> str:
    for klass in type(spec).__mro__:
        if klass.__name__.endswith("SpoutSpec"):
            return SPOUT
        if klass.__name__.endswith("BoltSpec"):
            return BOLT
    for attribute, kind in (("thrift_spouts", SPOUT), ("thrift_bolts", BOLT)):
        table = getattr(topology_cls, attribute, None)
        if isinstance(table, Mapping) and name in table:
            return kind
    raise InvalidComponentError(
        f"component {name!r}: {type(spec).__name__} is neither a spout spec nor a bolt spec; "
        f"create it with a Spout or Bolt class's spec(...).",
        component=name,
    )


def _reject_java(kind: str, name: str, component_object: Any) -> None:
    java_object = getattr(component_object, "java_object", None)
    if java_object is None and getattr(component_object, "serialized_java", None) is None:
        return
    java_class = getattr(java_object, "full_class_name", None) or "a serialized Java object"
    raise UnsupportedComponentError(
        f"{kind} {name!r} is a Java component ({java_class}); the engines run Python and "
        f"shell components only. Replace it with a Python {kind} or a Shell{kind.title()}.",
        component=name,
    )


def _shell_of(component_object: Any) -> tuple[str, str] | None:
    shell = getattr(component_object, "shell", None)
    if shell is None:
        return None
    return (shell.execution_command, shell.script or "")


def _python_class(kind: str, component_cls: Any) -> type | None:
    if not isinstance(component_cls, type):
        return None
    if callable(getattr(component_cls, _ENTRY_POINTS[kind], None)):
        return component_cls
    return None


def _spec_config(kind: str, name: str, config: Any) -> Mapping[str, Any]:
    if config is None:
        return {}
    if isinstance(config, (str, bytes)):
        try:
            config = json.loads(config)
        except ValueError as exc:
            raise InvalidConfigError(
                f"{kind} {name!r} has a config that is not JSON ({exc}); pass a dict to "
                f"spec(config=...).",
                component=name,
            ) from None
    if not isinstance(config, Mapping):
        raise InvalidConfigError(
            f"{kind} {name!r} has config {config!r}; a component config must be a dict of "
            f"Storm config keys.",
            component=name,
        )
    return config


def _outputs(component: str, outputs: Any) -> dict[str, StreamDef]:
    streams = {}
    for stream_name, info in (outputs or {}).items():
        fields = getattr(info, "output_fields", None)
        if fields is None:
            fields = getattr(info, "fields", None) or ()
        streams[stream_name] = StreamDef(
            component=component,
            name=stream_name,
            fields=tuple(fields),
            direct=bool(getattr(info, "direct", False)),
        )
    return streams


def _input(bolt: str, stream_id: Any, grouping: Any) -> InputDef:
    # the user's spec as given: a name, a spec not yet named or missing, each passed on to
    # the plan's validation, which names the subscription it cannot resolve
    source: Any = getattr(stream_id, "componentId", None)
    if source is not None and not isinstance(source, str):  # a spec not yet named
        source = getattr(source, "name", None)
    stream: Any = getattr(stream_id, "streamId", None)
    chosen = [a for a in _GROUPING_ATTRIBUTES if getattr(grouping, a, None) is not None]
    if len(chosen) != 1:
        raise InvalidGroupingError(
            f"bolt {bolt!r} subscribes to stream {stream!r} of {source!r} with {grouping!r}, "
            f"which sets {len(chosen)} grouping kinds; use exactly one Grouping (e.g. "
            f"Grouping.SHUFFLE or Grouping.fields('word')).",
            component=bolt,
            stream=stream,
        )
    kind = chosen[0]
    if kind in ("custom_object", "custom_serialized"):
        java = getattr(getattr(grouping, "custom_object", None), "full_class_name", None)
        raise UnsupportedGroupingError(
            f"bolt {bolt!r} subscribes to stream {stream!r} of {source!r} with a Java custom "
            f"grouping ({java or 'serialized Java object'}); the engines cannot run Java "
            f"groupings. Use Grouping.fields(...), SHUFFLE, ALL, GLOBAL, DIRECT or "
            f"LOCAL_OR_SHUFFLE.",
            component=bolt,
            stream=stream,
        )
    if kind == "python_custom":
        spec = grouping.python_custom
        try:
            load_custom_grouping(spec)  # at load, never at the first tuple
        except GroupingError as exc:
            raise InvalidGroupingError(f"bolt {bolt!r} subscribes to stream {stream!r} of "
                                       f"{source!r}: {exc}", component=bolt,
                                       stream=stream) from None
        return InputDef(source, stream, "custom", custom_grouping=spec)
    if kind == "fields":
        fields = tuple(grouping.fields)
        return InputDef(source, stream, "fields" if fields else "global", fields)
    return InputDef(source, stream, kind)
