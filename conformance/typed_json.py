"""Tuple values as JSON without losing their types: the capture files' value encoding.

A capture must let the differ see exactly what a consumer saw: ``1`` and ``1.0`` are
different, a tuple is not a list, bytes are not a string. The engines write values with
:func:`encode`, which lives with the capture line format in
:mod:`engine.common.runtime.capture_format` (its docstring has the table of ``$`` tags) and is
re-exported here; the suite reads them back. :func:`encode` and :func:`decode` are exact
inverses for every type but ``$repr`` objects; :func:`json_view` is the lossy plain-JSON
spelling people and older tools read (tuples as lists, bytes as ``{"$bytes": hex}``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from conformance.canonical import canonical_json, canonical_value
from engine.common.runtime.capture_format import encode

__all__ = ["decode", "encode", "json_view"]


def _key(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:  # a key that was an object written by its repr
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
