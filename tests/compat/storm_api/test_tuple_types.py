"""Tuple and values namedtuples named exactly as pystorm names them."""
from __future__ import annotations

from collections import defaultdict

import pystorm
import pytest

from compat.storm_api.tuple import Tuple, source_tuple_types, values_type, values_type_name


def test_tuple_fields_are_storms():
    assert Tuple._fields == ("id", "component", "stream", "task", "values")


@pytest.mark.parametrize("source, stream, name", [
    ("spout", "default", "SpoutDefaultTuple"),
    ("example-spout", "default", "Example_SpoutDefaultTuple"),
    ("1st", "__tick", "_1St__TickTuple"),
    ("word.spout", "my stream", "Word_SpoutMy_StreamTuple"),
])
def test_values_type_names_follow_pystorms_rule(source, stream, name):
    assert values_type_name(source, stream) == name


def test_generated_names_equal_pystorms_for_the_same_context():
    context = {
        "source->stream->fields": {"a-b": {"default": ["x"], "9s": ["y", "z"]}, "c": {"x.y": []}}
    }
    for source, streams in context["source->stream->fields"].items():
        for stream, fields in streams.items():
            ours = source_tuple_types(context)[source][stream]
            theirs_name = (pystorm.bolt._IDENTIFIER_RE.sub("_", source.title())
                           + pystorm.bolt._IDENTIFIER_RE.sub("_", stream.title()) + "Tuple")
            assert ours.__name__ == theirs_name
            assert ours._fields == tuple(fields)


def test_source_tuple_types_tolerates_unknown_sources():
    types = source_tuple_types({})
    assert isinstance(types, defaultdict)
    assert types["nobody"].get("default") is None


def test_invalid_field_names_fail_like_pystorm():
    with pytest.raises(ValueError):
        values_type("s", "default", ["not-an-identifier"])
