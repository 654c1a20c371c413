"""From one file's YAML mapping to a :class:`~.model.TopologyDef`, checking every key.

Flux (SnakeYAML bound to flux-core's model classes) fails on a key its model does not
have; so do we, naming the key and its line, and listing the keys that exist there.
Types are checked here too (an ``id`` that is a list, a ``parallelism`` that is text), so
the mapping of Java classes downstream reads only well-formed definitions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import FluxError, Where
from .model import (
    BeanDef,
    GroupingDef,
    IncludeDef,
    MethodCall,
    Ref,
    RefList,
    StreamDef,
    TopologyDef,
    VertexDef,
)
from .parser import MarkedDict, MarkedList

__all__ = ["GROUPING_TYPES", "read_definitions"]

TOP_KEYS = ("name", "config", "components", "includes", "spouts", "bolts", "streams",
            "topologySource", "workerHooks")
BEAN_KEYS = ("id", "className", "constructorArgs", "properties", "configMethods", "factory",
             "factoryArgs")
VERTEX_KEYS = (*BEAN_KEYS, "parallelism", "numTasks", "onHeapMemoryLoad",
               "offHeapMemoryLoad", "cpuLoad", "config")
GROUPING_TYPES = ("ALL", "CUSTOM", "DIRECT", "SHUFFLE", "LOCAL_OR_SHUFFLE", "FIELDS", "GLOBAL",
                  "NONE")


def read_definitions(data: MarkedDict, warnings: list[str]) -> TopologyDef:
    """The definitions of one Flux file (its includes listed, not yet read)."""
    _check_keys(data, TOP_KEYS, "the top level")
    if "topologySource" in data:
        source = data["topologySource"]
        cls = source.get("className") if isinstance(source, dict) else None
        raise FluxError(data.where_of("topologySource"),
                        f"topologySource ({cls or 'a Java class'}) builds the topology in "
                        "Java, which cannot run here; declare spouts, bolts and streams in "
                        "the YAML instead")
    if "workerHooks" in data:
        raise FluxError(data.where_of("workerHooks"),
                        "workerHooks are Java classes (IWorkerHook), which cannot run here; "
                        "remove them")
    topology = TopologyDef(file=data.file)
    if "name" in data:
        topology.name = _text(data, "name")
        topology.name_where = data.where_of("name")
    if data.get("config") is not None:
        topology.config = _plain_mapping(data, "config")
    for item, where in _items(data, "components"):
        bean = _bean(item, where, BEAN_KEYS, "component")
        _add_unique(topology.components, bean, "component")
    for role, table in (("spout", topology.spouts), ("bolt", topology.bolts)):
        for item, where in _items(data, f"{role}s"):
            _add_unique(table, _vertex(item, where, role, warnings), role)
    for item, where in _items(data, "streams"):
        topology.streams.append(_stream(item, where))
    for item, where in _items(data, "includes"):
        topology.includes.append(_include(item, where))
    return topology


# -- one entry of each kind -----------------------------------------------------------------
def _bean(item: MarkedDict, where: Where, keys: Iterable[str], what: str) -> BeanDef:
    _check_keys(item, keys, f"a {what}")
    bean_id = _text(item, "id", required=True)
    bean = BeanDef(id=bean_id, class_name=_text(item, "className", required=True),
                   where=where)
    _fill_bean(bean, item)
    return bean


def _fill_bean(bean: BeanDef, item: MarkedDict) -> None:
    if item.get("constructorArgs") is not None:
        bean.constructor_args = _args(item, "constructorArgs")
    if item.get("factory") is not None:
        bean.factory = _text(item, "factory")
    if item.get("factoryArgs") is not None:
        bean.factory_args = _args(item, "factoryArgs")
    for prop, where in _items(item, "properties"):
        _check_keys(prop, ("name", "value", "ref"), "a property")
        name = _text(prop, "name", required=True)
        if ("value" in prop) == ("ref" in prop):
            raise FluxError(where, f"property {name!r} needs exactly one of 'value' and 'ref'")
        value = (Ref(_text(prop, "ref"), prop.where_of("ref")) if "ref" in prop
                 else _arg(prop["value"], prop.where_of("value")))
        setter = "set" + name[:1].upper() + name[1:]
        bean.calls.append(MethodCall(setter, [value], where, property=name))
    for method, where in _items(item, "configMethods"):
        _check_keys(method, ("name", "args"), "a configMethods entry")
        args = _args(method, "args") if method.get("args") is not None else []
        bean.calls.append(MethodCall(_text(method, "name", required=True), args, where))


def _vertex(item: MarkedDict, where: Where, role: str, warnings: list[str]) -> VertexDef:
    _check_keys(item, VERTEX_KEYS, f"a {role}")
    vertex = VertexDef(id=_text(item, "id", required=True),
                       class_name=_text(item, "className", required=True), where=where,
                       role=role)
    _fill_bean(vertex, item)
    if "parallelism" in item:
        vertex.parallelism = _positive_int(item, "parallelism")
    if item.get("config") is not None:
        vertex.config = _plain_mapping(item, "config")
    if "numTasks" in item and _positive_int(item, "numTasks") != vertex.parallelism:
        warnings.append(f"{item.where_of('numTasks')}: {role} {vertex.id!r}: numTasks is "
                        f"not used here; it runs {vertex.parallelism} task(s), one per "
                        "executor (its parallelism)")
    for key in ("onHeapMemoryLoad", "offHeapMemoryLoad", "cpuLoad"):
        if key in item:
            warnings.append(f"{item.where_of(key)}: {role} {vertex.id!r}: {key} is ignored; "
                            "declare resources with the topology.component.resources.* "
                            "config keys")
    return vertex


def _stream(item: MarkedDict, where: Where) -> StreamDef:
    _check_keys(item, ("name", "from", "to", "grouping"), "a stream")
    name = _text(item, "name") if item.get("name") is not None else None
    source = _text(item, "from", required=True)
    target = _text(item, "to", required=True)
    grouping = item.get("grouping")
    if not isinstance(grouping, MarkedDict):
        raise FluxError(item.where_of("grouping"),
                        f"stream {source!r} -> {target!r}: 'grouping' must be a mapping "
                        "with a 'type' (SHUFFLE, FIELDS, ...)")
    _check_keys(grouping, ("type", "streamId", "args", "customClass"), "a grouping")
    kind = _text(grouping, "type", required=True)
    if kind not in GROUPING_TYPES:
        raise FluxError(grouping.where_of("type"),
                        f"unknown grouping type {kind!r}; Flux's are {', '.join(GROUPING_TYPES)}")
    definition = GroupingDef(type=kind, where=grouping.where)
    if grouping.get("streamId") is not None:
        definition.stream_id = _text(grouping, "streamId")
    if grouping.get("args") is not None:
        args = grouping["args"]
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise FluxError(grouping.where_of("args"),
                            "grouping 'args' must be a list of field names")
        definition.args = list(args)
    if grouping.get("customClass") is not None:
        custom = grouping["customClass"]
        definition.custom_class = (custom.get("className") if isinstance(custom, dict)
                                   else None) or "a Java class"
    return StreamDef(name=name, source=source, target=target, grouping=definition,
                     where=where, from_where=item.where_of("from"), to_where=item.where_of("to"))


def _include(item: MarkedDict, where: Where) -> IncludeDef:
    _check_keys(item, ("file", "resource", "override"), "an include")
    include = IncludeDef(file=_text(item, "file", required=True), where=where)
    for key in ("resource", "override"):
        if key in item:
            if not isinstance(item[key], bool):
                raise FluxError(item.where_of(key), f"include {key!r} must be true or false")
            setattr(include, key, item[key])
    return include


# -- values -------------------------------------------------------------------------------
def _args(item: MarkedDict, key: str) -> list[Any]:
    value = item[key]
    if not isinstance(value, MarkedList):
        raise FluxError(item.where_of(key), f"{key!r} must be a list")
    return [_arg(v, value.where_of(i)) for i, v in enumerate(value)]


def _arg(value: Any, where: Where) -> Any:
    """An argument: ``{ref: ID}`` and ``{reflist: [...]}`` become references (as Flux's
    ObjectDef does, one level deep); everything else plain Python values."""
    if isinstance(value, MarkedDict) and len(value) == 1:
        if "ref" in value:
            if not isinstance(value["ref"], str):
                raise FluxError(where, "'ref' must name a component id")
            return Ref(value["ref"], value.where_of("ref"))
        if "reflist" in value:
            ids = value["reflist"]
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise FluxError(where, "'reflist' must be a list of component ids")
            return RefList(tuple(ids), value.where_of("reflist"))
    return plain(value)


def plain(value: Any) -> Any:
    """``value`` with its marked containers turned back into plain dicts and lists."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _items(data: MarkedDict, key: str) -> list[tuple[MarkedDict, Where]]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, MarkedList):
        raise FluxError(data.where_of(key), f"{key!r} must be a list")
    out = []
    for index, entry in enumerate(value):
        where = value.where_of(index)
        if not isinstance(entry, MarkedDict):
            raise FluxError(where, f"each entry of {key!r} must be a mapping, not {entry!r}")
        out.append((entry, where))
    return out


def _check_keys(data: MarkedDict, allowed: Iterable[str], what: str) -> None:
    allowed = tuple(allowed)
    for key in data:
        if key not in allowed:
            raise FluxError(data.where_of(key),
                            f"unknown key {key!r} in {what} (known: {', '.join(allowed)})")


def _text(data: MarkedDict, key: str, *, required: bool = False) -> str:
    if key not in data or data[key] is None:
        if required:
            raise FluxError(data.where, f"missing key {key!r}")
        return ""
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise FluxError(data.where_of(key), f"{key!r} must be text, not {_kind(value)}")
    text = str(value)
    if required and not text:
        raise FluxError(data.where_of(key), f"{key!r} must not be empty")
    return text


def _positive_int(data: MarkedDict, key: str) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise FluxError(data.where_of(key), f"{key!r} must be a whole number of at least 1, "
                                            f"not {value!r}")
    return value


def _plain_mapping(data: MarkedDict, key: str) -> dict[str, Any]:
    value = data[key]
    if not isinstance(value, MarkedDict):
        raise FluxError(data.where_of(key), f"{key!r} must be a mapping, not {_kind(value)}")
    for k in value:
        if not isinstance(k, str):
            raise FluxError(value.where_of(k), f"{key!r} keys must be text, not {k!r}")
    mapping: dict[str, Any] = plain(value)
    return mapping


def _add_unique(table: dict[str, Any], entry: BeanDef, what: str) -> None:
    if entry.id in table:
        raise FluxError(entry.where, f"duplicate {what} id {entry.id!r} "
                                     f"(first at {table[entry.id].where})")
    table[entry.id] = entry


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{value!r}"
