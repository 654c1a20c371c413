"""Stream and Grouping: constructors, type checks, equality and reprs."""

from __future__ import annotations

import pytest

from compat.storm_api import thrift
from compat.storm_api.dsl import Grouping, Stream
from compat.storm_api.dsl.errors import InvalidTopologyType, InvalidTopologyValue


def test_stream_defaults_to_default_stream_without_fields():
    stream = Stream()
    assert (stream.fields, stream.name, stream.direct) == ([], "default", False)


def test_stream_accepts_tuple_of_fields_and_stores_a_list():
    assert Stream(("a", "b"), name="pairs").fields == ["a", "b"]


def test_stream_is_a_stream_info_with_output_fields_alias():
    stream = Stream(["a"], direct=True)
    assert isinstance(stream, thrift.StreamInfo)
    assert stream.output_fields == ["a"]


def test_stream_repr_matches_streamparse():
    assert repr(Stream(["a"], name="x")) == "Stream(fields=['a'], name='x', direct=False)"


@pytest.mark.parametrize("fields", ["word", 3])
def test_stream_fields_of_wrong_type_is_a_type_error(fields):
    with pytest.raises(InvalidTopologyType, match="fields must be a list or tuple"):
        Stream(fields)


def test_stream_field_name_must_be_str():
    with pytest.raises(InvalidTopologyType, match="every field name must be a str"):
        Stream(["a", 1])


def test_stream_name_must_be_str():
    with pytest.raises(InvalidTopologyType, match="Stream name must be a str"):
        Stream(["a"], name=1)


def test_stream_direct_must_be_bool():
    with pytest.raises(InvalidTopologyType, match="direct must be True or False"):
        Stream(["a"], direct=1)


def test_streams_compare_by_value():
    assert Stream(["a"], "s") == Stream(["a"], "s")
    assert Stream(["a"], "s") != Stream(["a"], "t")


@pytest.mark.parametrize(
    ("grouping", "field", "expected_repr"),
    [
        (Grouping.SHUFFLE, "shuffle", "SHUFFLE"),
        (Grouping.DIRECT, "direct", "DIRECT"),
        (Grouping.ALL, "all", "ALL"),
        (Grouping.NONE, "none", "NONE"),
        (Grouping.LOCAL_OR_SHUFFLE, "local_or_shuffle", "LOCAL_OR_SHUFFLE"),
    ],
)
def test_argumentless_groupings_set_one_null_field_and_print_by_name(
    grouping, field, expected_repr
):
    assert thrift.union_field(grouping) == (field, thrift.NullStruct())
    assert repr(grouping) == expected_repr


def test_global_grouping_is_empty_fields_grouping():
    assert Grouping.GLOBAL == thrift.Grouping(fields=[])
    assert repr(Grouping.GLOBAL) == "fields([])"


def test_fields_grouping_takes_names_as_arguments_or_one_list():
    assert Grouping.fields("a", "b") == Grouping.fields(["a", "b"])
    assert Grouping.fields("a", "b").fields == ["a", "b"]
    assert repr(Grouping.fields("a")) == "fields(['a'])"


def test_fields_grouping_copies_the_list_given():
    names = ["a"]
    grouping = Grouping.fields(names)
    names.append("b")
    assert grouping.fields == ["a"]


@pytest.mark.parametrize("args", [(), ([],)])
def test_fields_grouping_without_fields_is_a_value_error(args):
    with pytest.raises(InvalidTopologyValue, match="Grouping.GLOBAL"):
        Grouping.fields(*args)


def test_groupings_equal_plain_thrift_groupings_both_ways():
    plain = thrift.Grouping(shuffle=thrift.NullStruct())
    assert Grouping.SHUFFLE == plain and plain == Grouping.SHUFFLE
    assert Grouping.SHUFFLE != Grouping.ALL


def test_custom_object_grouping_carries_java_class_and_arguments():
    grouping = Grouping.custom_object("org.x.MyGrouping", [1, "a"])
    assert grouping.custom_object == thrift.JavaObject(
        full_class_name="org.x.MyGrouping",
        args_list=[thrift.JavaObjectArg(long_arg=1), thrift.JavaObjectArg(string_arg="a")],
    )
    assert repr(grouping).startswith("custom_object(JavaObject(full_class_name='org.x.MyGrouping'")


def test_custom_object_grouping_with_unsupported_argument_is_a_type_error():
    with pytest.raises(InvalidTopologyType):
        Grouping.custom_object("org.x.MyGrouping", [object()])


def test_custom_serialized_grouping_carries_bytes():
    assert Grouping.custom_serialized(b"\xac\xed").custom_serialized == b"\xac\xed"


def test_custom_serialized_grouping_raises_for_non_bytes():
    # streamparse returns (does not raise) this TypeError; raising is the useful fix.
    with pytest.raises(InvalidTopologyType, match="as bytes"):
        Grouping.custom_serialized("not bytes")
