"""``HeronComponentSpec``: what ``Spout.spec()`` / ``Bolt.spec()`` return, as in heronpy.

It records the same things heronpy's spec records (name, class path, spout or bolt,
parallelism, inputs, outputs, config) with heronpy's checks and errors. Where heronpy
would build a protobuf, the ``Topology`` metaclass hands these specs to
``heronpy.api.component.translate``, which builds the ``compat.storm_api`` specs our
compiler reads; ``get_protobuf()`` still gives Heron's message, for code that inspects it.
"""

from __future__ import annotations

import uuid
from typing import Any

from heronpy.api.stream import Grouping, Stream


class HeronComponentSpec:
    """How one component is placed in a topology: see ``Spout.spec`` and ``Bolt.spec``."""

    def __init__(self, name: str | None, python_class_path: str, is_spout: bool, par: int,
                 inputs: Any = None, outputs: Any = None, config: dict[str, Any] | None = None,
                 component_cls: type | None = None) -> None:
        self._sanitize_args(name, python_class_path, is_spout, par)
        self.name = name
        self.python_class_path = python_class_path
        self.is_spout = is_spout
        self.parallelism = par
        # inputs, outputs and config are checked when the topology is built, as in heronpy
        self.inputs = inputs
        self.outputs = outputs
        self.custom_config = config
        #: the class itself (heronpy keeps only its path; our engines run the live class)
        self.component_cls = component_cls
        # identifies a spec not named yet (GlobalStreamId's str and hash use it)
        self.uuid = str(uuid.uuid4())

    @staticmethod
    def _sanitize_args(name: Any, py_class_path: Any, is_spout: Any, par: Any) -> None:
        assert name is None or isinstance(name, str)
        assert isinstance(py_class_path, str)
        assert isinstance(is_spout, bool)
        assert isinstance(par, int) and par > 0

    def _sanitize_inputs(self) -> dict[GlobalStreamId, Any] | None:
        """The inputs as ``{GlobalStreamId: grouping}`` (a list means SHUFFLE)."""
        if self.inputs is None:
            return None
        ret: dict[GlobalStreamId, Any] = {}
        if isinstance(self.inputs, dict):
            for key, grouping in list(self.inputs.items()):
                if not Grouping.is_grouping_sane(grouping):
                    raise ValueError("A given grouping is not supported")
                ret[self._stream_id_of(key, "to inputs")] = grouping
        elif isinstance(self.inputs, (list, tuple)):
            for input_obj in self.inputs:
                ret[self._stream_id_of(input_obj, "as an input")] = Grouping.SHUFFLE
        else:
            raise TypeError(f"Inputs must be a list, dict, or None, given: {self.inputs}")
        return ret

    @staticmethod
    def _stream_id_of(key: Any, role: str) -> GlobalStreamId:
        if isinstance(key, HeronComponentSpec):
            if key.name is None:
                raise RuntimeError("In _sanitize_inputs(): HeronComponentSpec doesn't have a name")
            return GlobalStreamId(key.name, Stream.DEFAULT_STREAM_ID)
        if isinstance(key, GlobalStreamId):
            return key
        raise ValueError(f"{key} is not supported {role}" if role == "as an input"
                         else f"{key} is not supported as a key to inputs")

    def _sanitize_outputs(self) -> dict[str, list[str]] | None:
        """The outputs as ``{stream id: fields}``; bare strings are ``default``'s fields."""
        if self.outputs is None:
            return None
        if not isinstance(self.outputs, (list, tuple)):
            raise TypeError("Argument to outputs must be either list or tuple, given: "
                            f"{type(self.outputs)}")
        ret: dict[str, list[str]] = {}
        for output in self.outputs:
            if not isinstance(output, (str, Stream)):
                raise TypeError(f"Outputs must be a list of strings or Streams, given: {output}")
            if isinstance(output, str):
                ret.setdefault(Stream.DEFAULT_STREAM_ID, []).append(output)
            elif output.stream_id == Stream.DEFAULT_STREAM_ID and Stream.DEFAULT_STREAM_ID in ret:
                ret[Stream.DEFAULT_STREAM_ID].extend(output.fields)
            else:
                ret[output.stream_id] = list(output.fields)
        return ret

    def get_protobuf(self) -> Any:
        """Heron's ``topology_pb2.Spout`` or ``Bolt`` for this spec (heronpy's)."""
        from heronpy.api.component.protobuf import component_protobuf
        return component_protobuf(self)

    def get_out_streamids(self) -> set[str]:
        """Returns a set of output stream ids registered for this component."""
        if self.outputs is None:
            return set()
        return set(self._sanitize_outputs() or {})

    def __getitem__(self, stream_id: str) -> GlobalStreamId:
        """Get GlobalStreamId for a given stream_id (``inputs={spout['error']: ...}``)."""
        if stream_id not in self.get_out_streamids():
            raise ValueError(f"A given stream id does not exist on this component: {stream_id}")
        return GlobalStreamId(componentId=self.name or self, streamId=stream_id)


class GlobalStreamId:
    """A component's stream, as an inputs key: ``GlobalStreamId("spout", "error")``."""

    def __init__(self, componentId: str | HeronComponentSpec, streamId: str) -> None:
        if not isinstance(componentId, (str, HeronComponentSpec)):
            raise TypeError("GlobalStreamId: componentId must be either string or "
                            "HeronComponentSpec")
        if not isinstance(streamId, str):
            raise TypeError("GlobalStreamId: streamId must be string type")
        self._component_id = componentId
        self.stream_id = streamId

    @property
    def component_id(self) -> str:
        """The component's name (a placeholder with the spec's uuid while it has none)."""
        if isinstance(self._component_id, HeronComponentSpec):
            if self._component_id.name is None:
                return ("<No name available for HeronComponentSpec yet, uuid: "
                        f"{self._component_id.uuid}>")
            return self._component_id.name
        return self._component_id

    def __eq__(self, other: object) -> bool:
        return (hasattr(other, "component_id") and self.component_id == other.component_id
                and hasattr(other, "stream_id") and self.stream_id == other.stream_id)

    def __hash__(self) -> int:
        return hash(self.__str__())

    def __str__(self) -> str:
        return f"{self.component_id}:{self.stream_id}"
