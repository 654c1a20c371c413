"""Storm's ``Tuple`` record and the per-(source, stream) values types.

Bolts hand users ``tup.values`` as a namedtuple named after the source
component and stream, so user code written against pystorm can say
``tup.values.word``.  The type names must match pystorm's byte for byte
because they show up in reprs, logs and error messages users grep for.
"""
from __future__ import annotations

import re
from collections import defaultdict, namedtuple
from typing import Any, NamedTuple, cast

__all__ = ["Tuple", "values_type_name", "values_type", "source_tuple_types"]

class Tuple(NamedTuple):
    """Storm's primitive data type passed around via streams.

``id`` is the input id Storm gave the tuple (a string for shell bolts),
``component`` and ``stream`` say where it came from (``"__system"`` /
``"__tick"`` for ticks), ``task`` is the source task (``-1`` for ticks and
heartbeats) and ``values`` is a namedtuple when the source stream's fields
are known, else a plain tuple.
"""

    id: Any  # the user's or the engine's message id
    component: str
    stream: str
    task: int
    values: tuple[Any, ...]

# Non-word characters and a leading digit become "_" (pystorm's rule), so the
# generated names are valid identifiers.
_IDENTIFIER_RE = re.compile(r"\W|^(?=\d)")


def values_type_name(source: str, stream: str) -> str:
    """Name pystorm gives the values namedtuple of ``source``/``stream``.

    ``values_type_name("example-spout", "default") == "Example_SpoutDefaultTuple"``.
    """
    return (
        _IDENTIFIER_RE.sub("_", source.title()) + _IDENTIFIER_RE.sub("_", stream.title()) + "Tuple"
    )


def values_type(source: str, stream: str, fields: list[str]) -> type[NamedTuple]:
    """Build the namedtuple type for the values of ``source``/``stream``.

    Field names that are not identifiers raise ``ValueError`` exactly as they
    do under pystorm (the component fails at start-up).
    """
    # a namedtuple whose name and fields are known only at run time, which the type
    # checker can only see as a plain tuple type
    return cast("type[NamedTuple]", namedtuple(values_type_name(source, stream), fields))


def source_tuple_types(
    context: dict[str, Any]
) -> defaultdict[str, dict[str, type[NamedTuple]]]:
    """Values types for every input stream listed in a Storm context dict.

    Returned as ``defaultdict(dict)`` because pystorm's lookup
    ``types[source].get(stream)`` must tolerate unknown sources (ticks,
    heartbeats) by falling back to plain tuples.
    """
    types: defaultdict[str, dict[str, type[NamedTuple]]] = defaultdict(dict)
    for source, stream_fields in context.get("source->stream->fields", {}).items():
        for stream, fields in stream_fields.items():
            types[source][stream] = values_type(source, stream, fields)
    return types
