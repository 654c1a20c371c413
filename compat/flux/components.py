"""The Java classes a Flux file names, mapped to what runs here.

Flux builds every ``components`` entry (a bean) and every spout and bolt by reflection.
We cannot run Java, so each class we accept has a mapping: Flux's shell wrappers become
multilang shell components, Storm's Kafka spout and bolt (and the beans that configure
them: ``kafka.py``) become the native connectors, and a ``module:Class`` className (our
extension) names a Python component. Any other class is refused, before anything
starts, at the line that names it.
"""

from __future__ import annotations

from typing import Any

from .errors import FluxError, Where
from .kafka import KAFKA_BEANS, KAFKA_VERTICES
from .model import BeanDef, FluxComponent, Ref, RefList, VertexDef

__all__ = ["Beans", "SHELL_BOLT", "SHELL_SPOUT", "map_vertex", "refuse_class"]

SHELL_BOLT = "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
SHELL_SPOUT = "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"


def refuse_class(where: Where, what: str, class_name: str) -> FluxError:
    """The one line for a Java class that has no equivalent here."""
    return FluxError(where, f"{what}: Java class {class_name} cannot run on this engine; "
                            "only Flux's FluxShellSpout/FluxShellBolt, Storm's KafkaSpout/"
                            "KafkaBolt with their config classes, and Python classes "
                            "('module:Class') map to components here (docs/flux.md)")


class Beans:
    """The ``components`` of a topology, each built once, on first reference."""

    def __init__(self, definitions: dict[str, BeanDef]) -> None:
        self._definitions = definitions
        self._built: dict[str, Any] = {}
        self._building: list[str] = []

    def build_all(self) -> None:
        """Build every component, referenced or not, as Flux does: a Java class nobody
        refers to is still refused."""
        for bean in self._definitions.values():
            self._build(bean)

    def resolve(self, value: Any) -> Any:
        """An argument with its references replaced by what they stand for."""
        if isinstance(value, Ref):
            return self.get(value.id, value.where)
        if isinstance(value, RefList):
            return [self.get(i, value.where) for i in value.ids]
        return value

    def get(self, bean_id: str, where: Where) -> Any:
        bean = self._definitions.get(bean_id)
        if bean is None:
            known = ", ".join(self._definitions) or "none"
            raise FluxError(where, f"ref {bean_id!r}: no component has that id "
                                   f"(components: {known})")
        return self._build(bean)

    def _build(self, bean: BeanDef) -> Any:
        if bean.id in self._built:
            return self._built[bean.id]
        if bean.id in self._building:
            cycle = " -> ".join([*self._building[self._building.index(bean.id):], bean.id])
            raise FluxError(bean.where, f"component {bean.id!r} refers to itself ({cycle})")
        handler = KAFKA_BEANS.get(bean.class_name)
        if handler is None:
            raise refuse_class(bean.where, f"component {bean.id!r}", bean.class_name)
        self._building.append(bean.id)
        try:
            value = handler(self, bean)
        finally:
            self._building.pop()
        self._built[bean.id] = value
        return value


def map_vertex(beans: Beans, vertex: VertexDef) -> FluxComponent:
    """The component a ``spouts`` or ``bolts`` entry becomes."""
    shell_class = SHELL_SPOUT if vertex.role == "spout" else SHELL_BOLT
    if vertex.class_name == shell_class:
        return _shell(beans, vertex)
    if vertex.class_name in (SHELL_SPOUT, SHELL_BOLT):
        raise FluxError(vertex.where, f"{vertex.role} {vertex.id!r}: {vertex.class_name} is "
                                      f"not a {vertex.role}; use {shell_class}")
    if ":" in vertex.class_name:
        return _python(vertex)
    handler = KAFKA_VERTICES.get(vertex.class_name)
    if handler is None:
        raise refuse_class(vertex.where, f"{vertex.role} {vertex.id!r}", vertex.class_name)
    component = handler(beans, vertex)
    if component.role != vertex.role:
        raise FluxError(vertex.where, f"{vertex.role} {vertex.id!r}: {vertex.class_name} is a "
                                      f"{component.role}, declare it under {component.role}s")
    return component


def _shell(beans: Beans, vertex: VertexDef) -> FluxComponent:
    """FluxShellSpout/FluxShellBolt: constructorArgs ``[[command, args...]]`` or
    ``[[command, args...], [fields]]``; configMethods setDefaultStream([fields]),
    setNamedStream(stream, [fields]) and addComponentConfig(key, value)."""
    where = f"{vertex.role} {vertex.id!r}"
    args = [beans.resolve(a) for a in vertex.constructor_args]
    if len(args) not in (1, 2):
        raise FluxError(vertex.where, f"{where}: FluxShell{vertex.role.title()} takes "
                                      "constructorArgs [[command, args...]] or [[command, "
                                      f"args...], [output fields]]; given {len(args)} argument(s)")
    command = _strings(args[0], vertex.where, f"{where}: the command")
    if not command:
        raise FluxError(vertex.where, f"{where}: the command must not be empty")
    outputs: dict[str, list[str]] = {}
    if len(args) == 2:
        outputs["default"] = _strings(args[1], vertex.where, f"{where}: the output fields")
    config = dict(vertex.config)
    for call in vertex.calls:
        values = [beans.resolve(a) for a in call.args]
        if call.name == "setDefaultStream" and len(values) == 1:
            outputs["default"] = _strings(values[0], call.where, f"{where}: setDefaultStream")
        elif call.name == "setNamedStream" and len(values) == 2 and isinstance(values[0], str):
            outputs[values[0]] = _strings(values[1], call.where, f"{where}: setNamedStream")
        elif call.name == "addComponentConfig" and len(values) == 2 and isinstance(values[0], str):
            config[values[0]] = values[1]
        else:
            raise FluxError(
                call.where,
                f"{where}: {call.name} with {len(values)} argument(s) "
                "has no equivalent here (known: setDefaultStream([fields]), "
                "setNamedStream(stream, [fields]), "
                "addComponentConfig(key, value))",
            )
    if vertex.role == "spout" and not outputs:
        raise FluxError(vertex.where, f"{where}: a shell spout needs output fields (a second "
                                      "constructor argument, or setDefaultStream)")
    return FluxComponent(id=vertex.id, role=vertex.role, kind="shell",
                         class_name=vertex.class_name, parallelism=vertex.parallelism,
                         line=vertex.where.line, file=vertex.where.file, command=command,
                         outputs=outputs, config=config)


def _python(vertex: VertexDef) -> FluxComponent:
    """``className: module:Class``: a Python spout or bolt of the topology's directory,
    run natively (its outputs are the class's)."""
    module, _, name = vertex.class_name.partition(":")
    if not module or not name:
        raise FluxError(vertex.where, f"{vertex.role} {vertex.id!r}: className "
                                      f"{vertex.class_name!r} is not 'module:Class'")
    if vertex.constructor_args or vertex.calls or vertex.factory:
        raise FluxError(vertex.where, f"{vertex.role} {vertex.id!r}: a Python component takes "
                                      "no constructorArgs, properties or configMethods; set "
                                      "its config instead")
    return FluxComponent(id=vertex.id, role=vertex.role, kind="python",
                         class_name=vertex.class_name, parallelism=vertex.parallelism,
                         line=vertex.where.line, file=vertex.where.file,
                         config=dict(vertex.config), class_path=vertex.class_name)


def _strings(value: Any, where: Where, what: str) -> list[str]:
    if isinstance(value, str):
        raise FluxError(where, f"{what} must be a list like [{value!r}], not text")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FluxError(where, f"{what} must be a list of text, not {value!r}")
    return list(value)
