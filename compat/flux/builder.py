"""A Flux topology (``FluxTopology.topology_class()``) as a ``compat.storm_api`` Topology class, the
form the plan compiler (and so both engines) takes.

Shell components become ``ShellSpout``/``ShellBolt`` specs; Kafka components the native
connectors' specs with their settings in the component config (imported here, lazily,
so reading a Flux file never needs confluent-kafka); Python components their class's
``spec()``. Groupings map one to one onto ``Grouping``.
"""

from __future__ import annotations

import importlib
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from compat.storm_api import Grouping, ShellBolt, ShellSpout, Stream, Topology
from compat.storm_api.dsl.stream import GlobalStreamId
from compat.storm_api.dsl.topology import TopologyType

from .errors import FluxError, Where
from .model import FluxComponent, FluxStream

__all__ = ["build_topology_class", "shell_command"]

_GROUPINGS = {"SHUFFLE": Grouping.SHUFFLE, "ALL": Grouping.ALL, "GLOBAL": Grouping.GLOBAL,
              "NONE": Grouping.NONE, "DIRECT": Grouping.DIRECT,
              "LOCAL_OR_SHUFFLE": Grouping.LOCAL_OR_SHUFFLE}


def shell_command(argv: list[str]) -> tuple[str, str]:
    """``(command, script)`` of a shell spec for Flux's ``[command, args...]``: Storm
    passes each element as one argument; a spec carries a command and one argument, so
    longer command lines travel as one shell-quoted command the engines split back."""
    if len(argv) == 1:
        return argv[0], ""
    if len(argv) == 2:
        return argv[0], argv[1]
    return shlex.join(argv), ""


def build_topology_class(name: str, config: dict[str, Any], components: list[FluxComponent],
                         streams: list[FluxStream], directory: Path) -> type:
    """The Topology subclass (a new class each call) of a Flux topology's components and
    streams; ``directory`` (the Flux file's) is where Python components are imported from."""
    inputs: dict[str, dict[Any, Any]] = {c.id: {} for c in components if c.role == "bolt"}
    direct: set[tuple[str, str]] = set()
    for stream in streams:
        key = GlobalStreamId(componentId=stream.source, streamId=stream.stream_id)
        if stream.grouping == "FIELDS":
            grouping = Grouping.fields(list(stream.fields or []))
        else:
            grouping = _GROUPINGS[stream.grouping]
        if stream.grouping == "DIRECT":
            # Flux's shell wrappers cannot declare a direct stream; subscribing with
            # DIRECT is what says the stream is one
            direct.add((stream.source, stream.stream_id))
        inputs[stream.target][key] = grouping
    body: dict[str, Any] = {"config": dict(config)}
    for index, component in enumerate(components):
        spec_inputs = inputs.get(component.id) if component.role == "bolt" else None
        body[f"_flux_{index}"] = _spec(directory, component, spec_inputs, direct)
    class_name = "Flux_" + re.sub(r"\W", "_", name)
    return TopologyType(class_name, (Topology,), body)


def _spec(directory: Path, component: FluxComponent, inputs: dict[str, Any] | None,
          direct: set[tuple[str, str]]) -> Any:
    config = dict(component.config)
    if component.kind == "shell":
        command, script = shell_command(component.command or [])
        outputs = [Stream(fields=fields, name=name, direct=(component.id, name) in direct)
                   for name, fields in component.outputs.items()]
        if component.role == "spout":
            return ShellSpout.spec(name=component.id, command=command, script=script,
                                   par=component.parallelism, config=config, outputs=outputs)
        return ShellBolt.spec(name=component.id, command=command, script=script, inputs=inputs,
                              par=component.parallelism, config=config, outputs=outputs)
    if component.kind in ("kafka_spout", "kafka_sink"):
        config = {**component.settings, **config}
    cls = _load_class(directory, component)
    if component.role == "spout":
        return cls.spec(name=component.id, par=component.parallelism, config=config)
    return cls.spec(name=component.id, inputs=inputs, par=component.parallelism, config=config)


def _load_class(directory: Path, component: FluxComponent) -> Any:
    """The class ``component.class_path`` names; a Python component's module is looked
    up in the Flux file's directory (and its ``src/``), as a project's are.

    The user's class (a class with a ``spec``: ours, pystorm's or streamparse's)."""
    where = Where(component.file, component.line)
    module_name, _, qualname = (component.class_path or "").partition(":")
    if component.kind == "python":
        for entry in (directory / "src", directory):
            if str(entry) not in sys.path:
                sys.path.append(str(entry))
    try:
        value: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            value = getattr(value, part)
    except ImportError as exc:
        raise FluxError(where, f"{component.role} {component.id!r}: cannot import "
                               f"{module_name} for {component.class_name}: {exc}") from None
    except AttributeError:
        raise FluxError(where, f"{component.role} {component.id!r}: {module_name} has no "
                               f"{qualname}") from None
    if not isinstance(value, type) or not hasattr(value, "spec"):
        raise FluxError(where, f"{component.role} {component.id!r}: {component.class_path} is "
                               "not a Spout or Bolt class")
    return value
