"""``HeronComponentSpec.get_protobuf()``: the spec as Heron's ``topology_pb2.Spout`` or
``Bolt``, as heronpy built it.

Our engines do not read these messages (the compiler reads the specs themselves), but
published topologies and Heron's own test builders inspect them
(``spec.get_protobuf().inputs[i].stream.component_name``), so they get the real message
from the engine's copy of Heron's ``topology.proto``: the component's name, class path
and config, its input streams with their groupings, its output streams and fields.
"""

from __future__ import annotations

from typing import Any

from engine.messages import topology_pb2
from heronpy.api.serializer import default_serializer
from heronpy.api.stream import Grouping


def _config(config: dict[str, Any] | None) -> Any:
    """Heron's rule: strings, numbers and booleans as their text, anything else pickled."""
    out = topology_pb2.Config()
    for key, value in (config or {}).items():
        kv = out.kvs.add(key=str(key))
        if isinstance(value, (str, int, float, bool)):
            kv.value = str(value)
            kv.type = topology_pb2.STRING_VALUE
        else:
            kv.serialized_value = default_serializer.serialize(value)
            kv.type = topology_pb2.PYTHON_SERIALIZED_VALUE
    return out


def _input(message: Any, stream_id: Any, grouping: Any) -> None:
    stream = message.inputs.add()
    stream.stream.id = stream_id.stream_id
    stream.stream.component_name = stream_id.component_id
    if isinstance(grouping, Grouping.FIELDS):
        stream.gtype = topology_pb2.FIELDS
        for field in grouping.fields:
            stream.grouping_fields.keys.add(key=field, type=topology_pb2.OBJECT)
    elif isinstance(grouping, Grouping.CUSTOM):
        stream.gtype = topology_pb2.CUSTOM
        stream.custom_grouping_object = grouping.python_serialized
        stream.type = topology_pb2.PYTHON_OBJECT
    else:
        stream.gtype = grouping


def component_protobuf(spec: Any) -> Any:
    """The ``topology_pb2.Spout`` or ``Bolt`` of a named ``HeronComponentSpec``."""
    if spec.name is None:
        raise RuntimeError("get_protobuf(): the spec has no name yet (it gets one when the "
                           "topology is built)")
    message = topology_pb2.Spout() if spec.is_spout else topology_pb2.Bolt()
    message.comp.name = spec.name
    message.comp.spec = topology_pb2.PYTHON_CLASS_NAME
    message.comp.class_name = spec.python_class_path
    message.comp.config.CopyFrom(_config(spec.custom_config))
    if not spec.is_spout:
        for stream_id, grouping in (spec._sanitize_inputs() or {}).items():
            _input(message, stream_id, grouping)
    for stream, fields in (spec._sanitize_outputs() or {}).items():
        out = message.outputs.add()
        out.stream.id = stream
        out.stream.component_name = spec.name
        for field in fields:
            out.schema.keys.add(key=field, type=topology_pb2.OBJECT)
    return message
