"""Component specs: what a ``Component.spec(...)`` call returns inside a Topology class.

A spec records how one component is placed in a topology: its name, parallelism,
own config, output streams and subscriptions. The attribute names and shapes are
streamparse's, exactly, because the planner reads the specs of unchanged streamparse
topologies and of ours through the same attributes:

- ``name``: ``str`` (``None`` until the Topology class names it after its attribute)
- ``component_cls``: the component class
- ``par``: ``int`` >= 1, or ``{environment: int}``
- ``config``: the component's own Storm config as a JSON ``str``
- ``outputs``: ``{stream: StreamInfo(output_fields=[...], direct=bool)}``
- ``inputs``: ``{GlobalStreamId(componentId, streamId): Grouping}``
- ``common``: ``ComponentCommon(inputs, streams=outputs, parallelism_hint=par, json_conf=config)``
- ``component_object``: ``ComponentObject(shell=...)`` or ``(java_object=...)`` or
  ``(serialized_java=...)``

The two DSLs mix: while streamparse is imported, the specs made here are also instances
of streamparse's spec classes, so a ``streamparse.Topology`` and streamparse's
``Bolt.spec(inputs=...)`` take them; and the checks here take streamparse's specs,
groupings, stream ids and streams as well as ours. ``interop`` explains the mechanism
and why it was chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import simplejson as json

from .. import thrift
from ..thrift import (
    ComponentCommon,
    ComponentObject,
    JavaObject,
    ShellComponent,
    StreamInfo,
    to_java_arg,
)
from . import interop
from .errors import InvalidTopologyKey, InvalidTopologyType, InvalidTopologyValue
from .stream import GlobalStreamId, Grouping, Stream

__all__ = [
    "ComponentSpec",
    "JavaBoltSpec",
    "JavaComponentSpec",
    "JavaSpoutSpec",
    "PYTHON_COMMAND",
    "PythonBoltSpec",
    "PythonSpoutSpec",
    "ShellBoltSpec",
    "ShellComponentSpec",
    "ShellSpoutSpec",
    "spec_for_bolt",
    "spec_for_spout",
]

_Spec = TypeVar("_Spec", bound="ComponentSpec")

#: The command a Python component's spec names, as in streamparse, so its
#: ``component_object`` (and a Flux file made from it) is the one Storm would get.
PYTHON_COMMAND = "streamparse_run"


def spec_types() -> tuple[type[ComponentSpec], ...]:
    """What counts as a spec here: ours, and streamparse's when it is loaded."""
    return interop.accepted(ComponentSpec, "ComponentSpec")


def stream_id_types() -> tuple[type[thrift.GlobalStreamId], ...]:
    """What counts as a ``GlobalStreamId`` (an inputs key, ``spec["stream"]``)."""
    return interop.accepted(thrift.GlobalStreamId, "GlobalStreamId")


def grouping_types() -> tuple[type[thrift.Grouping], ...]:
    """What counts as a grouping (``Grouping.fields(...)`` of either DSL)."""
    return interop.accepted(thrift.Grouping, "Grouping")


def _describe(component_cls: Any, name: str | None) -> str:
    """Name a component in an error message: its class, and its spec name once known."""
    cls_name = getattr(component_cls, "__name__", repr(component_cls))
    return f"{cls_name} {name!r}" if name else cls_name


def _sanitize_par(component_cls: Any, name: str | None, par: Any) -> Any:
    """Check a parallelism hint; ``None`` means the class's ``par``."""
    if par is None:
        par = getattr(component_cls, "par", 1)
    where = _describe(component_cls, name)
    if isinstance(par, dict):
        for env, hint in par.items():
            if not (isinstance(env, str) and isinstance(hint, int)):
                raise InvalidTopologyType(
                    f"{where}: a par dict maps environment names (str) to parallelism "
                    f"(int); given {env!r}: {hint!r}."
                )
            if hint < 1:
                raise InvalidTopologyValue(
                    f"{where}: par for environment {env!r} must be 1 or more; given {hint}."
                )
    elif not isinstance(par, int):
        raise InvalidTopologyType(
            f"{where}: par must be an int of 1 or more, or a dict "
            f"{{environment: int}}; given {par!r}."
        )
    elif par < 1:
        raise InvalidTopologyValue(f"{where}: par must be 1 or more; given {par}.")
    return par


def _sanitize_config(component_cls: Any, name: str | None, config: Any) -> str:
    """Turn the component's own config into the JSON string Storm stores (json_conf).

    simplejson, as streamparse uses, so the string is byte for byte the same.
    """
    if config is None:
        config = getattr(component_cls, "config", None)
    if config is None:
        return "{}"
    where = _describe(component_cls, name)
    if not isinstance(config, dict):
        raise InvalidTopologyType(
            f"{where}: config must be a dict of Storm settings or None; given {config!r}."
        )
    try:
        return json.dumps(config)
    except TypeError as exc:
        raise InvalidTopologyType(
            f"{where}: config must hold only JSON values: {exc}"
        ) from exc
    except ValueError as exc:
        raise InvalidTopologyValue(
            f"{where}: config cannot be written as JSON: {exc}"
        ) from exc


def _sanitize_outputs(component_cls: Any, name: str | None, outputs: Any) -> dict[str, StreamInfo]:
    """Turn ``outputs`` (field names and ``Stream`` objects) into ``{stream: StreamInfo}``.

    Bare strings are fields of the ``default`` stream; a later ``Stream`` of the same
    name replaces what came before, as in streamparse. Field lists are copied, so
    building a spec never changes the class's ``outputs`` (streamparse appends to the
    declared ``Stream``'s list when strings follow a ``Stream(name="default")``).
    """
    if outputs is None:
        outputs = getattr(component_cls, "outputs", None)
    if outputs is None:
        outputs = []
    where = _describe(component_cls, name)
    if not isinstance(outputs, (list, tuple)):
        raise InvalidTopologyType(
            f"{where}: outputs must be a list of field names and/or Stream objects; "
            f"given {outputs!r}. For one field write outputs = [{outputs!r}]."
        )
    streams: dict[str, StreamInfo] = {}
    stream_types = interop.accepted(Stream, "Stream")
    for output in outputs:
        if isinstance(output, stream_types):
            streams[output.name] = StreamInfo(
                output_fields=list(output.fields), direct=output.direct
            )
        elif isinstance(output, str):
            default = streams.setdefault(
                "default", StreamInfo(output_fields=[], direct=False)
            )
            default.output_fields.append(output)
        else:
            raise InvalidTopologyType(
                f"{where}: each entry of outputs must be a field name (str) or a "
                f"Stream (from compat.storm_api or streamparse); given {output!r}."
            )
    return streams


def _sanitize_inputs(
    component_cls: Any, name: str | None, inputs: Any
) -> dict[thrift.GlobalStreamId, thrift.Grouping]:
    """Turn ``inputs`` into ``{GlobalStreamId: Grouping}``.

    A dict is converted in place (streamparse does, and a topology may share it); a
    spec key means its ``default`` stream. A list subscribes with SHUFFLE, or DIRECT
    when the source spec's ``default`` stream is direct.
    """
    where = _describe(component_cls, name)
    specs, stream_ids = spec_types(), stream_id_types()
    if isinstance(inputs, dict):
        groupings = grouping_types()
        for key, grouping in list(inputs.items()):
            if not isinstance(key, stream_ids):
                if not isinstance(key, specs):
                    raise InvalidTopologyType(
                        f"{where}: the keys of an inputs dict must be specs or "
                        f"spec['stream'] (GlobalStreamId); given key {key!r}."
                    )
                inputs[key["default"]] = grouping
                del inputs[key]
            if not isinstance(grouping, groupings):
                raise InvalidTopologyType(
                    f"{where}: the values of an inputs dict must be groupings "
                    f"(Grouping.SHUFFLE, Grouping.fields(...), ...); given {grouping!r} "
                    f"for input {key!r}."
                )
        return inputs
    if isinstance(inputs, specs):
        inputs = [inputs]
    if isinstance(inputs, (list, tuple)):
        input_dict: dict[thrift.GlobalStreamId, thrift.Grouping] = {}
        for source in inputs:
            grouping = Grouping.SHUFFLE
            stream_id: thrift.GlobalStreamId
            if isinstance(source, specs):
                stream_id = GlobalStreamId(componentId=source.name or source, streamId="default")
                default_stream = source.common.streams.get("default")
                if default_stream is not None and default_stream.direct:
                    grouping = Grouping.DIRECT
            elif isinstance(source, stream_ids):
                stream_id = source
            else:
                raise InvalidTopologyType(
                    f"{where}: each input must be a spec or spec['stream']; given "
                    f"{source!r}. Refer to the spec object, not its name."
                )
            input_dict[stream_id] = grouping
        return input_dict
    if inputs is None:
        return {}
    raise InvalidTopologyType(
        f"{where}: inputs must be a list of specs, a dict {{spec: Grouping}}, a single "
        f"spec or None; given {inputs!r}."
    )


class ComponentSpec:
    """How one component sits in a topology; see the module docstring for attributes.

    Has no ``__eq__`` on purpose: a spec can be the ``componentId`` of a
    ``GlobalStreamId`` dict key before it is named, so it must hash by identity.
    """

    #: which streamparse class an instance also is, while streamparse is loaded
    _streamparse_role = "ComponentSpec"
    #: what Storm runs; set by the shell and Java specs, the ones a topology places
    component_object: ComponentObject

    def __new__(cls: type[_Spec], *args: Any, **kwargs: Any) -> _Spec:
        return object.__new__(interop.instance_class(cls))

    def __init__(
        self,
        component_cls: type,
        name: str | None = None,
        inputs: Any = None,
        par: Any = 1,
        config: dict[str, Any] | None = None,
        outputs: Sequence[str | Stream] | None = None,
    ) -> None:
        self.component_cls = component_cls
        self.name = name
        self.par = _sanitize_par(component_cls, name, par)
        self.config = _sanitize_config(component_cls, name, config)
        self.outputs = _sanitize_outputs(component_cls, name, outputs)
        self.inputs = _sanitize_inputs(component_cls, name, inputs)
        self.common = ComponentCommon(
            inputs=self.inputs,
            streams=self.outputs,
            parallelism_hint=self.par,
            json_conf=self.config,
        )

    def __getitem__(self, stream: str) -> GlobalStreamId:
        """Subscribe to a named stream: ``inputs=[spout["errors"]]``."""
        if stream not in self.common.streams:
            raise InvalidTopologyKey(
                f"{_describe(self.component_cls, self.name)} has no output stream "
                f"{stream!r}; its streams are {list(self.common.streams)}. Declare it "
                f"in outputs with Stream(fields=[...], name={stream!r})."
            )
        # Not named yet (the Topology class names specs after their attribute): the
        # spec itself stands in, and the Topology replaces it with the name.
        return GlobalStreamId(componentId=self.name or self, streamId=stream)

    def __repr__(self) -> str:
        attrs = {key: value for key, value in vars(self).items() if key != "component_cls"}
        body = "".join(f", {key}={value!r}" for key, value in attrs.items())
        return f"{type(self).__name__}({self.component_cls.__name__}{body})"


class ShellComponentSpec(ComponentSpec):
    """A component Storm runs as a subprocess: ``command script`` over multi-lang."""

    _streamparse_role = "ShellComponentSpec"

    def __init__(
        self,
        component_cls: type,
        name: str | None = None,
        command: str | None = None,
        script: str | None = None,
        inputs: Any = None,
        par: Any = 1,
        config: dict[str, Any] | None = None,
        outputs: Sequence[str | Stream] | None = None,
    ) -> None:
        super().__init__(
            component_cls, name=name, inputs=inputs, par=par, config=config, outputs=outputs
        )
        where = _describe(component_cls, name)
        if not command:
            raise InvalidTopologyValue(
                f"{where}: a shell component needs command=, the program to start "
                "(for example 'python3' or 'node')."
            )
        if script is None:
            raise InvalidTopologyType(
                f"{where}: script must not be None; pass the arguments to {command!r} "
                "as one string, or '' if it takes none."
            )
        self.component_object = ComponentObject(
            shell=ShellComponent(execution_command=command, script=script)
        )


class JavaComponentSpec(ComponentSpec):
    """A JVM component: serialized Java, or a class name with constructor arguments."""

    _streamparse_role = "JavaComponentSpec"

    def __init__(
        self,
        component_cls: type,
        name: str | None = None,
        serialized_java: bytes | None = None,
        full_class_name: str | None = None,
        args_list: Sequence[Any] | None = None,
        inputs: Any = None,
        par: Any = None,
        config: dict[str, Any] | None = None,
        outputs: Sequence[str | Stream] | None = None,
    ) -> None:
        super().__init__(
            component_cls, name=name, inputs=inputs, par=par, config=config, outputs=outputs
        )
        where = _describe(component_cls, name)
        if serialized_java is not None:
            if not isinstance(serialized_java, bytes):
                raise InvalidTopologyType(
                    f"{where}: serialized_java must be bytes or None; "
                    f"given {type(serialized_java).__name__}."
                )
            self.component_object = ComponentObject(serialized_java=serialized_java)
            return
        if not full_class_name:
            raise InvalidTopologyValue(
                f"{where}: a Java component needs serialized_java= or full_class_name= "
                "(with args_list=)."
            )
        # streamparse converts the caller's list in place (so a tuple fails there); we
        # build a new list and accept any list or tuple.
        if not isinstance(args_list, (list, tuple)):
            raise InvalidTopologyType(
                f"{where}: args_list must be a list of constructor arguments (use [] "
                f"for none); given {args_list!r}."
            )
        java_object = JavaObject(
            full_class_name=full_class_name,
            args_list=[to_java_arg(arg) for arg in args_list],
        )
        self.component_object = ComponentObject(java_object=java_object)


class ShellSpoutSpec(ShellComponentSpec):
    """A spout run as a subprocess."""

    _streamparse_role = "ShellSpoutSpec"

    def __init__(
        self,
        component_cls: type,
        name: str | None = None,
        command: str | None = None,
        script: str | None = None,
        par: Any = 1,
        config: dict[str, Any] | None = None,
        outputs: Sequence[str | Stream] | None = None,
    ) -> None:
        super().__init__(
            component_cls,
            name=name,
            par=par,
            config=config,
            outputs=outputs,
            command=command,
            script=script,
        )


class ShellBoltSpec(ShellComponentSpec):
    """A bolt run as a subprocess."""

    _streamparse_role = "ShellBoltSpec"


class JavaSpoutSpec(JavaComponentSpec):
    """A JVM spout."""

    _streamparse_role = "JavaSpoutSpec"

    def __init__(
        self,
        component_cls: type,
        name: str | None = None,
        serialized_java: bytes | None = None,
        full_class_name: str | None = None,
        args_list: Sequence[Any] | None = None,
        par: Any = 1,
        config: dict[str, Any] | None = None,
        outputs: Sequence[str | Stream] | None = None,
    ) -> None:
        super().__init__(
            component_cls,
            name=name,
            serialized_java=serialized_java,
            full_class_name=full_class_name,
            args_list=args_list,
            par=par,
            config=config,
            outputs=outputs,
        )


class JavaBoltSpec(JavaComponentSpec):
    """A JVM bolt."""

    _streamparse_role = "JavaBoltSpec"

    def __init__(
        self,
        component_cls: type,
        name: str | None = None,
        serialized_java: bytes | None = None,
        full_class_name: str | None = None,
        args_list: Sequence[Any] | None = None,
        inputs: Any = None,
        par: Any = 1,
        config: dict[str, Any] | None = None,
        outputs: Sequence[str | Stream] | None = None,
    ) -> None:
        super().__init__(
            component_cls,
            name=name,
            serialized_java=serialized_java,
            full_class_name=full_class_name,
            args_list=args_list,
            inputs=inputs,
            par=par,
            config=config,
            outputs=outputs,
        )


def _python_script(component_cls: type) -> str:
    """The ``module.Class`` argument ``streamparse_run`` imports the component from."""
    return f"{component_cls.__module__}.{component_cls.__name__}"


class PythonSpoutSpec(ShellSpoutSpec):
    """A Python spout: a shell spec for ``streamparse_run module.Class``, as in streamparse.

    Its own class lets the engines tell a Python component they can run in-process
    from a foreign shell component, while everything that reads shell specs still works.
    """

    def __init__(
        self,
        component_cls: type,
        name: str | None = None,
        par: Any = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            component_cls,
            name=name,
            command=PYTHON_COMMAND,
            script=_python_script(component_cls),
            par=par,
            config=config,
            outputs=getattr(component_cls, "outputs", None),
        )


class PythonBoltSpec(ShellBoltSpec):
    """A Python bolt: a shell spec for ``streamparse_run module.Class``, as in streamparse."""

    def __init__(
        self,
        component_cls: type,
        name: str | None = None,
        inputs: Any = None,
        par: Any = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            component_cls,
            name=name,
            command=PYTHON_COMMAND,
            script=_python_script(component_cls),
            inputs=inputs,
            par=par,
            config=config,
            outputs=getattr(component_cls, "outputs", None),
        )


def spec_for_spout(
    component_cls: type,
    name: str | None = None,
    par: Any = None,
    config: dict[str, Any] | None = None,
) -> PythonSpoutSpec:
    """Build the spec ``Spout.spec(name=None, par=None, config=None)`` returns.

    Outputs come from the class's ``outputs``; ``par``/``config`` fall back to the class's.
    """
    return PythonSpoutSpec(component_cls, name=name, par=par, config=config)


def spec_for_bolt(
    component_cls: type,
    name: str | None = None,
    inputs: Any = None,
    par: Any = None,
    config: dict[str, Any] | None = None,
) -> PythonBoltSpec:
    """Build the spec ``Bolt.spec(name=None, inputs=None, par=None, config=None)`` returns."""
    return PythonBoltSpec(component_cls, name=name, inputs=inputs, par=par, config=config)
