"""Output streams and the groupings that split them across a bolt's tasks.

Same names, arguments, equality and reprs as ``streamparse.dsl.stream``: topology files
print groupings, compare them, and pass them as the values of ``inputs`` dicts.

Streams, groupings and stream ids made here are also streamparse's while streamparse is
imported, so its DSL takes them (``interop`` says how and why).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .. import thrift
from . import interop
from .errors import InvalidTopologyType, InvalidTopologyValue

__all__ = ["GlobalStreamId", "Grouping", "Stream"]


class Stream(thrift.StreamInfo):
    """One named output stream of a component, as listed in its ``outputs``.

    Like streamparse's, it subclasses ``StreamInfo`` but keeps its own attributes
    (``fields``, ``name``, ``direct``); specs turn it into a plain ``StreamInfo``.
    """

    _streamparse_role = "Stream"

    def __new__(cls, *args: Any, **kwargs: Any) -> Stream:
        return object.__new__(interop.instance_class(cls))

    def __init__(
        self,
        fields: Sequence[str] | None = None,
        name: str = "default",
        direct: bool = False,
    ) -> None:
        if fields is None:
            field_list: list[str] = []
        elif isinstance(fields, (list, tuple)):
            field_list = list(fields)
            for field in field_list:
                if not isinstance(field, str):
                    raise InvalidTopologyType(
                        f"Stream {name!r}: every field name must be a str; "
                        f"given {field!r} in {fields!r}."
                    )
        else:
            raise InvalidTopologyType(
                f"Stream {name!r}: fields must be a list or tuple of str, or None; "
                f"given {fields!r}. Write Stream(fields=[{fields!r}]) for one field."
            )
        if not isinstance(name, str):
            raise InvalidTopologyType(f"Stream name must be a str; given {name!r}.")
        if not isinstance(direct, bool):
            raise InvalidTopologyType(
                f"Stream {name!r}: direct must be True or False; given {direct!r}."
            )
        # Set directly rather than through StreamInfo.__init__, so vars() and the repr
        # are streamparse's Stream(fields=..., name=..., direct=...).
        self.fields = field_list
        self.name = name
        self.direct = direct

    # read-only here, as in streamparse: a Stream's fields are its ``fields``
    @property
    def output_fields(self) -> list[str]:  # type: ignore[override]
        """The fields under ``StreamInfo``'s name, so a Stream can stand where one is read."""
        return self.fields


class GlobalStreamId(thrift.GlobalStreamId):
    """The (component, stream) keys the DSL makes: ``spec["errors"]`` and the keys of
    ``inputs``. A ``thrift.GlobalStreamId`` (equal and hashing alike), and streamparse's
    too while it is imported."""

    _streamparse_role = "GlobalStreamId"

    def __new__(cls, *args: Any, **kwargs: Any) -> GlobalStreamId:
        return object.__new__(interop.instance_class(cls))


class NullStruct(thrift.NullStruct):
    """The value of the argument-less grouping kinds the DSL makes (``SHUFFLE``...), so
    that, mixed, ``Grouping.SHUFFLE`` equals streamparse's ``Grouping.SHUFFLE``."""

    _streamparse_role = "NullStruct"

    def __new__(cls, *args: Any, **kwargs: Any) -> NullStruct:
        return object.__new__(interop.instance_class(cls))


class _Grouping(thrift.Grouping):
    """A thrift Grouping that prints as ``SHUFFLE`` or ``fields(['word'])``."""

    _streamparse_role = "GroupingValue"

    def __new__(cls, *args: Any, **kwargs: Any) -> _Grouping:
        return object.__new__(interop.instance_class(cls))

    def __repr__(self) -> str:
        kind, value = thrift.union_field(self)
        if kind is None:
            return "Grouping()"
        if isinstance(value, thrift.NullStruct):
            return kind.upper()
        return f"{kind}({value!r})"


class _Constant:
    """A ``Grouping`` constant, made on first access rather than at import: made while
    streamparse is imported, it is streamparse's grouping too (see ``interop``). One
    shared instance per kind of class (plain or mixed)."""

    def __init__(self, kind: str, value: Any) -> None:
        self._kind = kind
        self._value = value
        self._made: dict[type, _Grouping] = {}

    def __get__(self, instance: Any, owner: type) -> _Grouping:
        cls = interop.instance_class(_Grouping)
        made = self._made.get(cls)
        if made is None:
            value = NullStruct() if self._value is None else list(self._value)
            made = self._made[cls] = _Grouping(**{self._kind: value})
        return made


class Grouping:
    """The ways a bolt can subscribe to a stream (Storm's grouping kinds).

    Constants are shared instances: treat them as read-only.
    """

    __slots__ = ()

    #: Tuples go to the bolt's tasks at random, evenly.
    SHUFFLE = _Constant("shuffle", None)
    #: The whole stream goes to the bolt's task with the lowest id.
    GLOBAL = _Constant("fields", [])
    #: The emitter picks the task (``emit(direct_task=...)``) on a ``Stream(direct=True)``.
    DIRECT = _Constant("direct", None)
    #: Every tuple is copied to every task of the bolt.
    ALL = _Constant("all", None)
    #: "Don't care"; currently the same as shuffle.
    NONE = _Constant("none", None)
    #: Shuffle among tasks in the emitter's worker when there are any, else shuffle.
    LOCAL_OR_SHUFFLE = _Constant("local_or_shuffle", None)

    @classmethod
    def fields(cls, *fields: Any) -> thrift.Grouping:
        """Partition by the values of the named fields: equal keys reach the same task.

        Takes names as arguments or one list, as streamparse does. Names are checked
        against the source stream when the topology class is built, not here.
        """
        if len(fields) == 1 and isinstance(fields[0], list):
            names = list(fields[0])
        else:
            names = list(fields)
        if not names:
            raise InvalidTopologyValue(
                "Grouping.fields() needs at least one field name; "
                "use Grouping.GLOBAL to send the whole stream to one task."
            )
        return _Grouping(fields=names)

    @classmethod
    def custom_object(cls, java_class_name: str, arg_list: Iterable[Any]) -> thrift.Grouping:
        """Let a Java ``CustomStreamGrouping`` class, built with these arguments, pick tasks."""
        java_object = thrift.JavaObject(
            full_class_name=java_class_name,
            args_list=[thrift.to_java_arg(arg) for arg in arg_list],
        )
        return _Grouping(custom_object=java_object)

    @classmethod
    def custom_serialized(cls, java_serialized: bytes) -> thrift.Grouping:
        """Let a serialized Java ``CustomStreamGrouping`` pick tasks.

        streamparse *returns* its TypeError for a non-bytes argument (a bug that then
        surfaces as "not a Grouping" when the bolt spec is built); we raise it here.
        """
        if not isinstance(java_serialized, bytes):
            raise InvalidTopologyType(
                "Grouping.custom_serialized() takes a serialized Java grouping as "
                f"bytes; given {java_serialized!r}."
            )
        return _Grouping(custom_serialized=java_serialized)
