"""Plain-Python stand-ins for the Storm thrift structs that topology code touches.

streamparse loads Storm's ``storm.thrift`` with thriftpy2 and user code builds a few of
its structs by hand (``GlobalStreamId`` for cycles, ``JavaObjectArg`` for Java
components) or reads them off specs (``StreamInfo``, ``Grouping``, ``ComponentCommon``).
We never speak thrift to a Nimbus, so these are ordinary classes with the same names,
the same field names in the same order, and thriftpy2's semantics where users can see
them: positional or keyword construction, unset fields are ``None``, equality by value,
``vars()`` listing every field, and a ``Name(field=value, ...)`` repr.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

__all__ = [
    "Bolt",
    "ComponentCommon",
    "ComponentObject",
    "GlobalStreamId",
    "Grouping",
    "JavaObject",
    "JavaObjectArg",
    "NullStruct",
    "ShellComponent",
    "SpoutSpec",
    "StateSpoutSpec",
    "StormTopology",
    "StreamInfo",
    "ThriftStruct",
    "ThriftUnion",
    "to_java_arg",
    "to_python_arg",
    "union_field",
]


class UnnamedSource(Protocol):
    """A ``GlobalStreamId``'s source before it has a name: a DSL spec (``spec["stream"]``
    in a class body), which the Topology class replaces by the name it gives the spec."""

    name: str | None


def _freeze(value: Any) -> Any:
    """Turn lists and dicts into hashable equivalents so value-equal structs hash equal."""
    if isinstance(value, list):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, dict):
        return frozenset((key, _freeze(item)) for key, item in value.items())
    return value


class ThriftStruct:
    """A thrift struct: a fixed, ordered set of fields, each ``None`` until set.

    Subclasses declare ``_fields``; the class that declares them is the struct's
    identity for equality, so a subclass that only changes the repr (as the DSL's
    groupings do) still compares equal to the plain struct, in both directions.
    Structs are mutable and hash by value, like thriftpy2's: do not mutate one that is
    a dict key.
    """

    _fields: ClassVar[tuple[str, ...]] = ()
    _struct: ClassVar[type]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_fields" in cls.__dict__:
            cls._struct = cls

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(
                f"{type(self).__name__}() takes at most {len(fields)} positional "
                f"arguments ({len(args)} given)"
            )
        values = dict.fromkeys(fields)
        values.update(zip(fields, args))
        for key, value in kwargs.items():
            if key not in values:
                raise TypeError(
                    f"{type(self).__name__}() got an unexpected keyword argument {key!r}"
                )
            if fields.index(key) < len(args):
                raise TypeError(
                    f"{type(self).__name__}() got multiple values for argument {key!r}"
                )
            values[key] = value
        self.__dict__.update(values)

    def __repr__(self) -> str:
        body = ", ".join(f"{key}={value!r}" for key, value in vars(self).items())
        return f"{type(self).__name__}({body})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ThriftStruct):
            return NotImplemented
        return self._struct is other._struct and vars(self) == vars(other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((self._struct, _freeze(vars(self))))


ThriftStruct._struct = ThriftStruct


class ThriftUnion(ThriftStruct):
    """A thrift union: a struct of which at most one field is set.

    Refusing a second field at construction catches a grouping such as
    ``Grouping(fields=["a"], shuffle=NullStruct())``, which Storm would reject only at
    submit time.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        set_fields = [key for key, value in vars(self).items() if value is not None]
        if len(set_fields) > 1:
            raise TypeError(
                f"{type(self).__name__} is a union: set exactly one of "
                f"{', '.join(self._fields)}; got {', '.join(set_fields)}"
            )


def union_field(union: Any) -> tuple[str | None, Any]:
    """Return ``(field name, value)`` of the field a union has set, or ``(None, None)``.

    Works on thriftpy2 unions as well as ours, because planners and tests read the
    groupings of real streamparse topologies through the same function.
    """
    for key, value in vars(union).items():
        if not key.startswith("_") and value is not None:
            return key, value
    return None, None


class NullStruct(ThriftStruct):
    """Storm's empty struct, the value of the argument-less grouping kinds."""

    _fields = ()


class JavaObjectArg(ThriftUnion):
    """One argument of a Java constructor, tagged with its Java type."""

    _fields = ("int_arg", "long_arg", "string_arg", "bool_arg", "binary_arg", "double_arg")
    # a union: the one set field holds the value, the others are None
    int_arg: int | None
    long_arg: int | None
    string_arg: str | None
    bool_arg: bool | None
    binary_arg: bytes | None
    double_arg: float | None


class JavaObject(ThriftStruct):
    """A Java class to instantiate with constructor arguments."""

    _fields = ("full_class_name", "args_list")
    full_class_name: str
    args_list: list[JavaObjectArg]


class GlobalStreamId(ThriftStruct):
    """A (component, stream) pair: the key of a bolt's inputs."""

    _fields = ("componentId", "streamId")
    # the source's name; its spec until the Topology class names it
    componentId: str | UnnamedSource
    streamId: str

    def __hash__(self) -> int:
        # streamparse overrides the hash the same way; while a topology is being defined
        # componentId may still be a ComponentSpec, which hashes by identity.
        return hash(self.componentId) ^ hash(self.streamId)


class Grouping(ThriftUnion):
    """How a stream is split across a bolt's tasks; ``fields=[]`` means global."""

    _fields: ClassVar[tuple[str, ...]] = (
        "fields",
        "shuffle",
        "all",
        "none",
        "direct",
        "custom_object",
        "custom_serialized",
        "local_or_shuffle",
    )
    # a union: the one set field says the kind; the argument-less kinds hold a NullStruct
    fields: list[str] | None
    shuffle: NullStruct | None
    all: NullStruct | None
    none: NullStruct | None
    direct: NullStruct | None
    custom_object: JavaObject | None
    custom_serialized: bytes | None
    local_or_shuffle: NullStruct | None


class PythonCustomGrouping(Grouping):
    """Ours, not Storm's: a Python custom grouping the emitting task runs
    (``engine.common.grouping.custom``), named ``module:QualName`` or ``pickle:<base64>``, as
    heronpy's ``Grouping.custom(...)`` makes it. A subclass, so Storm's own groupings
    keep exactly Storm's fields (and compare equal to streamparse's)."""

    _fields = (*Grouping._fields, "python_custom")
    python_custom: str | None


class StreamInfo(ThriftStruct):
    """The declared fields of one output stream, and whether it is direct."""

    _fields = ("output_fields", "direct")
    output_fields: list[str]
    direct: bool


class ShellComponent(ThriftStruct):
    """A component run as a subprocess speaking the multi-lang protocol."""

    _fields = ("execution_command", "script")
    execution_command: str
    script: str


class ComponentObject(ThriftUnion):
    """What to run for a component: serialized Java, a shell command or a Java object."""

    _fields = ("serialized_java", "shell", "java_object")
    # a union: exactly one is set
    serialized_java: bytes | None
    shell: ShellComponent | None
    java_object: JavaObject | None


class ComponentCommon(ThriftStruct):
    """What every component declares: inputs, output streams, parallelism, own config."""

    _fields = ("inputs", "streams", "parallelism_hint", "json_conf")
    inputs: dict[GlobalStreamId, Grouping]
    streams: dict[str, StreamInfo]
    parallelism_hint: int | dict[str, int]
    json_conf: str


class SpoutSpec(ThriftStruct):
    """A spout as it appears in a StormTopology."""

    _fields = ("spout_object", "common")
    spout_object: ComponentObject
    common: ComponentCommon


class Bolt(ThriftStruct):
    """A bolt as it appears in a StormTopology."""

    _fields = ("bolt_object", "common")
    bolt_object: ComponentObject
    common: ComponentCommon


class StateSpoutSpec(ThriftStruct):
    """Declared by Storm but never implemented; kept so ``state_spouts`` has a type."""

    _fields = ("state_spout_object", "common")
    state_spout_object: ComponentObject
    common: ComponentCommon


class StormTopology(ThriftStruct):
    """The compiled topology: spouts and bolts by name."""

    _fields = (
        "spouts",
        "bolts",
        "state_spouts",
        "worker_hooks",
        "dependency_jars",
        "dependency_artifacts",
        "storm_version",
        "jdk_version",
    )
    spouts: dict[str, SpoutSpec]
    bolts: dict[str, Bolt]
    state_spouts: dict[str, StateSpoutSpec]
    # optional in Storm's IDL; None here unless a caller sets them
    worker_hooks: list[bytes] | None
    dependency_jars: list[str] | None
    dependency_artifacts: list[str] | None
    storm_version: str | None
    jdk_version: str | None


def to_java_arg(arg: Any) -> JavaObjectArg:
    """Tag a Python value with the Java type Storm should pass to a constructor.

    ``bool`` is tested before ``int`` (a bool is an int in Python) and every int
    becomes a Java long, as streamparse does, because Python has no int/long split.
    """
    if isinstance(arg, bool):
        return JavaObjectArg(bool_arg=arg)
    if isinstance(arg, int):
        return JavaObjectArg(long_arg=arg)
    if isinstance(arg, bytes):
        return JavaObjectArg(binary_arg=arg)
    if isinstance(arg, str):
        return JavaObjectArg(string_arg=arg)
    if isinstance(arg, float):
        return JavaObjectArg(double_arg=arg)
    # deferred: a real circle; importing dsl.errors runs dsl/__init__, whose modules import this one
    from .dsl.errors import InvalidTopologyType

    raise InvalidTopologyType(
        "Only bool, int, bytes, str and float can be passed to a Java constructor; "
        f"given {arg!r} ({type(arg).__name__}). Convert it to one of those types."
    )


def to_python_arg(java_arg: Any) -> Any:
    """Return the plain value carried by a ``JavaObjectArg`` (ours or thriftpy2's)."""
    return union_field(java_arg)[1]
