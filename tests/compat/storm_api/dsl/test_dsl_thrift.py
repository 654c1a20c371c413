"""The plain-Python thrift structs: construction, equality, hashing, unions, reprs."""

from __future__ import annotations

import pytest

from compat.storm_api import thrift
from compat.storm_api.dsl.errors import InvalidTopologyType


def test_struct_accepts_positional_and_keyword_fields():
    assert thrift.GlobalStreamId("a", "b") == thrift.GlobalStreamId(componentId="a", streamId="b")


def test_unset_fields_are_none():
    assert thrift.StreamInfo(["a"]).direct is None


def test_struct_rejects_unknown_keyword():
    with pytest.raises(TypeError, match="unexpected keyword argument 'stream'"):
        thrift.GlobalStreamId(componentId="a", stream="b")


def test_struct_rejects_too_many_positional_arguments():
    with pytest.raises(TypeError, match="at most 2"):
        thrift.GlobalStreamId("a", "b", "c")


def test_struct_rejects_field_given_twice():
    with pytest.raises(TypeError, match="multiple values"):
        thrift.GlobalStreamId("a", componentId="b")


def test_struct_repr_lists_every_field_in_thrift_order():
    assert repr(thrift.ComponentCommon(inputs={}, streams={})) == (
        "ComponentCommon(inputs={}, streams={}, parallelism_hint=None, json_conf=None)"
    )


def test_vars_lists_every_field_in_thrift_order():
    assert list(vars(thrift.Grouping())) == [
        "fields",
        "shuffle",
        "all",
        "none",
        "direct",
        "custom_object",
        "custom_serialized",
        "local_or_shuffle",
    ]


def test_structs_of_different_types_are_not_equal_even_with_same_fields():
    assert thrift.SpoutSpec(None, None) != thrift.Bolt(None, None)
    assert thrift.NullStruct() == thrift.NullStruct()


def test_global_stream_id_is_a_dict_key_by_value():
    inputs = {thrift.GlobalStreamId("words", "default"): "g"}
    assert inputs[thrift.GlobalStreamId("words", "default")] == "g"
    assert hash(thrift.GlobalStreamId("a", "b")) == hash("a") ^ hash("b")


def test_structs_holding_lists_hash_by_value():
    assert hash(thrift.StreamInfo(["a"], False)) == hash(thrift.StreamInfo(["a"], False))


def test_union_rejects_two_fields():
    with pytest.raises(TypeError, match="set exactly one of"):
        thrift.Grouping(fields=["a"], shuffle=thrift.NullStruct())


def test_union_field_reports_the_set_field():
    assert thrift.union_field(thrift.Grouping(fields=[])) == ("fields", [])
    assert thrift.union_field(thrift.Grouping()) == (None, None)


def test_union_field_reads_streamparse_groupings_too():
    from streamparse.dsl.stream import Grouping as StreamparseGrouping

    assert thrift.union_field(StreamparseGrouping.fields("w")) == ("fields", ["w"])
    assert thrift.union_field(StreamparseGrouping.ALL)[0] == "all"


@pytest.mark.parametrize(
    ("value", "field"),
    [
        (True, "bool_arg"),
        (3, "long_arg"),
        (b"x", "binary_arg"),
        ("x", "string_arg"),
        (1.5, "double_arg"),
    ],
)
def test_to_java_arg_tags_python_values_with_java_types(value, field):
    arg = thrift.to_java_arg(value)
    assert thrift.union_field(arg) == (field, value)
    assert thrift.to_python_arg(arg) == value


def test_to_java_arg_rejects_other_types():
    with pytest.raises(InvalidTopologyType, match="Java constructor"):
        thrift.to_java_arg([1])
