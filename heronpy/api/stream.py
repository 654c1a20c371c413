"""heronpy's ``Stream`` (an output stream) and ``Grouping`` (how a bolt subscribes).

Grouping constants are the ints of Heron's ``topology.proto`` enum, as in heronpy, so
code that compares them (``context.get_this_sources()`` values) keeps working; the
topology compiler turns them into the Storm groupings our engines route by:
SHUFFLE -> shuffle, ALL -> all, LOWEST -> global (the lowest task id), NONE -> none,
``fields(...)`` -> fields. DIRECT is refused as a subscription, as heronpy refuses it,
and so is ``Stream(direct=True)``. ``custom(...)`` builds what heronpy builds (the
cloudpickled grouping or class path); the engines run it in the emitting task
(``heronpy.api.component.custom_grouping_spec``).
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

from heronpy.api.custom_grouping import ICustomGrouping
from heronpy.api.serializer import default_serializer

#: Heron's topology.proto ``enum Grouping``
_PROTO_GROUPING = {"SHUFFLE": 1, "FIELDS": 2, "ALL": 3, "LOWEST": 4, "NONE": 5, "DIRECT": 6,
                   "CUSTOM": 7}

#: ``Grouping.FIELDS`` and ``Grouping.CUSTOM``, named at module level so a definition's
#: pickle refers to them by name (heronpy.api.definition) instead of carrying copies
FieldGrouping = collections.namedtuple("FieldGrouping", "gtype, fields")
CustomGrouping = collections.namedtuple("CustomGrouping", "gtype, python_serialized")


class Stream:
    """An output stream: its fields and its name (``default`` unless given)."""

    DEFAULT_STREAM_ID = "default"

    def __init__(self, fields: Sequence[str] | None = None, name: str = DEFAULT_STREAM_ID,
                 direct: bool = False) -> None:
        if fields is None:
            fields = []
        elif isinstance(fields, (list, tuple)):
            fields = list(fields)
            for field in fields:
                if not isinstance(field, str):
                    raise TypeError(f"All field names must be strings, given: {field}")
        else:
            raise TypeError(f"Stream fields must be a list, tuple or None, given: {fields}")
        self.fields: list[str] = fields
        if name is None:
            raise TypeError("Stream's name cannot be None")
        if not isinstance(name, str):
            raise TypeError(f"Stream name must be a string, given: {name}")
        self.stream_id = name
        if not isinstance(direct, bool):
            raise TypeError(f"'direct' must be either True or False, given: {direct}")
        self.direct = direct
        if direct:
            raise NotImplementedError("Direct stream is not supported yet.")


class Grouping:
    """Helper class for defining Grouping for Python topology."""

    SHUFFLE = _PROTO_GROUPING["SHUFFLE"]
    ALL = _PROTO_GROUPING["ALL"]
    LOWEST = _PROTO_GROUPING["LOWEST"]
    NONE = _PROTO_GROUPING["NONE"]
    DIRECT = _PROTO_GROUPING["DIRECT"]

    #: ``gtype`` is FIELDS (2)
    FIELDS = FieldGrouping
    #: ``gtype`` is CUSTOM (7); ``python_serialized`` is the cloudpickled grouping
    CUSTOM = CustomGrouping

    # StreamParse compatibility
    GLOBAL = LOWEST
    LOCAL_OR_SHUFFLE = SHUFFLE

    @classmethod
    def is_grouping_sane(cls, gtype: Any) -> bool:
        """Whether ``gtype`` may be used as a subscription (DIRECT may not, as in heronpy)."""
        if isinstance(gtype, cls.FIELDS):
            return gtype.gtype == _PROTO_GROUPING["FIELDS"] and gtype.fields is not None
        if isinstance(gtype, cls.CUSTOM):
            return (gtype.gtype == _PROTO_GROUPING["CUSTOM"]
                    and gtype.python_serialized is not None)
        if isinstance(gtype, bool) or not isinstance(gtype, int):
            return False
        return gtype in (cls.SHUFFLE, cls.ALL, cls.LOWEST, cls.NONE)

    @classmethod
    def fields(cls, *fields: Any) -> FieldGrouping:
        """Fields grouping: ``fields('word')``, ``fields('a', 'b')`` or ``fields(['a', 'b'])``."""
        if len(fields) == 1 and isinstance(fields[0], list):
            names = list(fields[0])
        else:
            names = list(fields)
        for name in names:
            if not isinstance(name, str):
                raise TypeError("Non-string cannot be specified in fields")
        if not names:
            raise ValueError("List cannot be empty for fields grouping")
        return cls.FIELDS(gtype=_PROTO_GROUPING["FIELDS"], fields=names)

    @classmethod
    def custom(cls, customgrouper: Any) -> CustomGrouping:
        """Custom grouping from an ``ICustomGrouping`` instance or its class path."""
        if customgrouper is None or not isinstance(customgrouper, (ICustomGrouping, str)):
            raise TypeError("Argument to custom() must be ICustomGrouping instance or classpath")
        serialized = default_serializer.serialize(customgrouper)
        return cls.custom_serialized(serialized, is_java=False)

    @classmethod
    def custom_serialized(cls, serialized: bytes, is_java: bool = True) -> CustomGrouping:
        """Custom grouping from a serialized Python grouping (Java ones are refused)."""
        if not isinstance(serialized, bytes):
            raise TypeError("Argument to custom_serialized() must be "
                            f"a serialized Python class as bytes, given: {serialized}")
        if not is_java:
            return cls.CUSTOM(gtype=_PROTO_GROUPING["CUSTOM"], python_serialized=serialized)
        raise NotImplementedError("Custom grouping implemented in Java for Python topology"
                                  "is not yet supported.")

    @classmethod
    def custom_object(cls, java_class_name: str, arg_list: Any) -> Any:
        """Tuples will be assigned to tasks by the given Java class (not supported)."""
        raise NotImplementedError("custom_object() method is not yet implemented")
