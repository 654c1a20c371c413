"""Tuple values as JSON without losing their types: the capture files' value encoding.

A capture must let the differ see exactly what a consumer saw: ``1`` and ``1.0`` are
different, a tuple is not a list, bytes are not a string. Plain JSON keeps ``int`` and
``float`` apart (``1`` against ``1.0``) but has no tuple, set, bytes, non-string dict key
or non-finite float, so those are written as one-key objects whose key starts with ``$``:

=======================  ==========================================
value                    written as
=======================  ==========================================
``(1, "a")``             ``{"$tuple": [1, "a"]}``
``{1, 2}``               ``{"$set": [1, 2]}`` (``$frozenset`` for frozensets)
``b"\\x00\\xff"``           ``{"$bytes": "00ff"}``
``float("nan")``         ``{"$float": "nan"}`` (also ``inf``, ``-inf``)
``{(1, 2): "x"}``        ``{"$map": [[{"$tuple": [1, 2]}, "x"]]}``
``{"$x": 1}``            ``{"$map": [["$x", 1]]}`` (so a user's ``$`` key is never a tag)
anything else            ``{"$repr": "<repr>"}`` (read back as that object, not the value)
=======================  ==========================================

Everything else (``None``, booleans, ints, finite floats, strings, lists, dicts with string
keys) is plain JSON, so a capture line is strict JSON that any reader (``jq``, Spark's
text reader) accepts. :func:`encode` and :func:`decode` are exact inverses for every type
in the table but the last; :func:`json_view` is the lossy plain-JSON spelling people and
older tools read (tuples as lists, bytes as ``{"$bytes": hex}``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["decode", "encode", "json_view"]

_PLAIN = (str, int, type(None))  # bool is an int


def encode(value: Any) -> Any:
    """``value`` as JSON-serialisable data from which :func:`decode` rebuilds it."""
    kind = type(value)
    if kind in _PLAIN or kind is bool:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if kind is list:
        return [encode(v) for v in value]
    if kind is tuple:
        return {"$tuple": [encode(v) for v in value]}
    if isinstance(value, Mapping):
        if all(type(k) is str for k in value) and not (
                len(value) == 1 and next(iter(value)).startswith("$")):
            return {k: encode(v) for k, v in value.items()}
        return {"$map": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": bytes(value).hex()}
    if isinstance(value, frozenset):
        return {"$frozenset": [encode(v) for v in value]}
    if isinstance(value, set):
        return {"$set": [encode(v) for v in value]}
    if isinstance(value, (str, int, float, list, tuple)):  # subclasses: as their base
        for base in (bool, str, int, float, list, tuple):
            if isinstance(value, base):
                return encode(base(value))
    return {"$repr": repr(value)}


def _key(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:  # a key that was an object written by its repr
        from conformance.canonical import canonical_json, canonical_value
        return canonical_json(canonical_value(value))
    return value


def decode(data: Any) -> Any:
    """The value :func:`encode` wrote (``$repr`` objects stay ``{"$repr": text}``)."""
    kind = type(data)
    if kind is list:
        return [decode(v) for v in data]
    if kind is not dict:
        return data
    if len(data) == 1:
        tag, inner = next(iter(data.items()))
        if tag == "$tuple":
            return tuple(decode(v) for v in inner)
        if tag == "$bytes":
            return bytes.fromhex(inner)
        if tag == "$float":
            return float(inner)
        if tag == "$map":
            return {_key(decode(k)): decode(v) for k, v in inner}
        if tag == "$set":
            return {_key(decode(v)) for v in inner}
        if tag == "$frozenset":
            return frozenset(_key(decode(v)) for v in inner)
    return {k: decode(v) for k, v in data.items()}


def _view_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)  # what json.dumps makes of such a key
    from conformance.canonical import canonical_json, canonical_value
    return canonical_json(canonical_value(key))


def json_view(value: Any) -> Any:
    """The plain-JSON spelling of a decoded value: tuples and sets as lists (sets sorted),
    bytes as ``{"$bytes": hex}``, dict keys as strings; NaN stays a float. It canonicalises
    (:mod:`conformance.canonical`) to what the value itself does."""
    if isinstance(value, (list, tuple)):
        return [json_view(v) for v in value]
    if isinstance(value, Mapping):
        return {_view_key(k): json_view(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        members = [json_view(v) for v in value]
        return sorted(members, key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": bytes(value).hex()}
    return value
