"""Spec argument rules (par, config, outputs, inputs, stream lookup) and spec attributes."""

from __future__ import annotations

import pytest

from compat.storm_api import thrift
from compat.storm_api.dsl import Grouping, Stream, spec_for_bolt, spec_for_spout
from compat.storm_api.dsl.component import (
    JavaBoltSpec,
    JavaSpoutSpec,
    PythonBoltSpec,
    PythonSpoutSpec,
    ShellBoltSpec,
    ShellSpoutSpec,
)
from compat.storm_api.dsl.errors import (
    InvalidTopologyKey,
    InvalidTopologyType,
    InvalidTopologyValue,
)


class StandInSpout:
    outputs = ["word"]
    par = 1
    config = None

    @classmethod
    def spec(cls, name=None, par=None, config=None):
        return spec_for_spout(cls, name=name, par=par, config=config)


class StandInBolt:
    outputs = ["word", "count"]
    par = 1
    config = None

    @classmethod
    def spec(cls, name=None, inputs=None, par=None, config=None):
        return spec_for_bolt(cls, name=name, inputs=inputs, par=par, config=config)


class DirectSpout(StandInSpout):
    outputs = [Stream(["word"], direct=True)]


# --- par ---------------------------------------------------------------------


def test_par_none_falls_back_to_class_par():
    class Wide(StandInSpout):
        par = 4

    assert Wide.spec().par == 4
    assert Wide.spec(par=2).par == 2


def test_par_may_be_a_dict_of_environments():
    spec = StandInSpout.spec(par={"prod": 8, "dev": 1})
    assert spec.par == {"prod": 8, "dev": 1}
    assert spec.common.parallelism_hint == {"prod": 8, "dev": 1}


@pytest.mark.parametrize("par", [0, -1])
def test_par_below_one_is_a_value_error(par):
    with pytest.raises(InvalidTopologyValue, match="par must be 1 or more"):
        StandInSpout.spec(par=par)


@pytest.mark.parametrize("par", [5.4, "2", [2]])
def test_par_that_is_not_an_int_is_a_type_error(par):
    with pytest.raises(InvalidTopologyType, match="par must be an int"):
        StandInSpout.spec(par=par)


def test_par_dict_with_non_int_value_is_a_type_error():
    with pytest.raises(InvalidTopologyType, match="'prod': 2.5"):
        StandInSpout.spec(par={"prod": 2.5})


def test_par_dict_with_non_str_key_is_a_type_error():
    with pytest.raises(InvalidTopologyType):
        StandInSpout.spec(par={1: 2})


def test_par_dict_with_zero_is_a_value_error():
    with pytest.raises(InvalidTopologyValue, match="environment 'prod'"):
        StandInSpout.spec(par={"prod": 0})


def test_bad_class_par_is_reported_when_spec_is_built():
    class Broken(StandInSpout):
        par = 0

    with pytest.raises(InvalidTopologyValue, match="Broken"):
        Broken.spec()


# --- config --------------------------------------------------------------------


def test_config_is_stored_as_json_string():
    spec = StandInBolt.spec(inputs=[], config={"topology.tick.tuple.freq.secs": 1})
    assert spec.config == '{"topology.tick.tuple.freq.secs": 1}'
    assert spec.common.json_conf == spec.config


def test_config_none_falls_back_to_class_config_then_empty_object():
    class Ticking(StandInSpout):
        config = {"topology.tick.tuple.freq.secs": 5}

    assert Ticking.spec().config == '{"topology.tick.tuple.freq.secs": 5}'
    assert StandInSpout.spec().config == "{}"


def test_config_string_is_a_type_error():
    with pytest.raises(InvalidTopologyType, match="config must be a dict"):
        StandInSpout.spec(config='{"a": 1}')


def test_config_with_unserializable_value_is_a_type_error():
    with pytest.raises(InvalidTopologyType, match="JSON"):
        StandInSpout.spec(config={"a": object()})


# --- outputs -------------------------------------------------------------------


def test_string_outputs_are_fields_of_default_stream():
    spec = StandInBolt.spec(inputs=[])
    assert spec.outputs == {
        "default": thrift.StreamInfo(output_fields=["word", "count"], direct=False)
    }
    assert spec.common.streams is spec.outputs


def test_stream_outputs_declare_named_and_direct_streams():
    class Multi(StandInSpout):
        outputs = ["word", Stream(["reason"], name="errors", direct=True)]

    assert Multi.spec().outputs == {
        "default": thrift.StreamInfo(["word"], False),
        "errors": thrift.StreamInfo(["reason"], True),
    }


def test_later_stream_of_same_name_replaces_earlier_fields():
    class Overridden(StandInSpout):
        outputs = ["a", Stream(["b"])]

    assert Overridden.spec().outputs["default"].output_fields == ["b"]


def test_building_a_spec_does_not_change_declared_streams():
    declared = Stream(["a"])

    class Mixed(StandInSpout):
        outputs = [declared, "b"]

    Mixed.spec()
    Mixed.spec()
    assert declared.fields == ["a"]
    assert Mixed.spec().outputs["default"].output_fields == ["a", "b"]


def test_missing_outputs_give_no_streams():
    class Quiet(StandInBolt):
        outputs = None

    assert Quiet.spec(inputs=[]).outputs == {}


def test_outputs_as_bare_string_is_a_type_error():
    class Careless(StandInSpout):
        outputs = "word"

    with pytest.raises(InvalidTopologyType, match=r"outputs = \['word'\]"):
        Careless.spec()


def test_outputs_entry_of_wrong_type_is_a_type_error():
    class Careless(StandInSpout):
        outputs = ["word", 3]

    with pytest.raises(InvalidTopologyType, match="given 3"):
        Careless.spec()


# --- inputs --------------------------------------------------------------------


def test_inputs_dict_with_spec_key_means_default_stream_and_is_converted_in_place():
    spout = StandInSpout.spec(name="words")
    inputs = {spout: Grouping.fields("word")}
    bolt = StandInBolt.spec(inputs=inputs)
    assert bolt.inputs is inputs
    assert inputs == {thrift.GlobalStreamId("words", "default"): Grouping.fields("word")}


def test_inputs_dict_accepts_global_stream_id_keys():
    key = thrift.GlobalStreamId("words", "errors")
    bolt = StandInBolt.spec(inputs={key: Grouping.ALL})
    assert bolt.inputs == {key: Grouping.ALL}


def test_inputs_dict_with_non_grouping_value_is_a_type_error():
    spout = StandInSpout.spec(name="words")
    with pytest.raises(InvalidTopologyType, match="values of an inputs dict must be groupings"):
        StandInBolt.spec(inputs={spout: "shuffle"})


def test_inputs_dict_with_string_key_is_a_type_error():
    with pytest.raises(InvalidTopologyType, match="keys of an inputs dict"):
        StandInBolt.spec(inputs={"words": Grouping.SHUFFLE})


def test_inputs_list_subscribes_with_shuffle():
    spout = StandInSpout.spec(name="words")
    bolt = StandInBolt.spec(inputs=[spout, thrift.GlobalStreamId("other", "s")])
    assert bolt.inputs == {
        thrift.GlobalStreamId("words", "default"): Grouping.SHUFFLE,
        thrift.GlobalStreamId("other", "s"): Grouping.SHUFFLE,
    }


def test_inputs_list_subscribes_direct_when_source_default_stream_is_direct():
    spout = DirectSpout.spec(name="words")
    bolt = StandInBolt.spec(inputs=[spout])
    assert bolt.inputs == {thrift.GlobalStreamId("words", "default"): Grouping.DIRECT}


def test_inputs_tuple_is_treated_like_list():
    spout = StandInSpout.spec(name="words")
    assert StandInBolt.spec(inputs=(spout,)).inputs == StandInBolt.spec(inputs=[spout]).inputs


def test_single_spec_input_is_a_one_element_list():
    spout = StandInSpout.spec(name="words")
    assert StandInBolt.spec(inputs=spout).inputs == {
        thrift.GlobalStreamId("words", "default"): Grouping.SHUFFLE
    }


def test_inputs_none_means_no_inputs():
    assert StandInBolt.spec().inputs == {}


@pytest.mark.parametrize("inputs", ["words", 3, thrift.GlobalStreamId("words", "default")])
def test_inputs_of_other_types_are_type_errors(inputs):
    with pytest.raises(InvalidTopologyType, match="inputs must be a list"):
        StandInBolt.spec(inputs=inputs)


def test_inputs_list_with_string_is_a_type_error():
    with pytest.raises(InvalidTopologyType, match="Refer to the spec object"):
        StandInBolt.spec(inputs=["words"])


def test_unnamed_spec_in_inputs_stands_for_itself_until_named():
    spout = StandInSpout.spec()
    bolt = StandInBolt.spec(inputs=[spout])
    assert list(bolt.inputs) == [thrift.GlobalStreamId(componentId=spout, streamId="default")]


# --- spec["stream"] ------------------------------------------------------------


def test_indexing_a_spec_names_one_of_its_streams():
    class Multi(StandInSpout):
        outputs = ["word", Stream(["reason"], name="errors")]

    spout = Multi.spec(name="words")
    assert spout["errors"] == thrift.GlobalStreamId(componentId="words", streamId="errors")


def test_indexing_an_unnamed_spec_uses_the_spec_itself():
    spout = StandInSpout.spec()
    assert spout["default"].componentId is spout


def test_indexing_an_unknown_stream_is_a_key_error():
    spout = StandInSpout.spec(name="words")
    with pytest.raises(KeyError) as info:
        spout["errors"]
    assert isinstance(info.value, InvalidTopologyKey)
    assert "StandInSpout 'words' has no output stream 'errors'" in str(info.value)


# --- Python, shell and Java specs ------------------------------------------------


def test_python_spout_spec_runs_module_and_class_through_streamparse_run():
    spec = StandInSpout.spec()
    assert isinstance(spec, PythonSpoutSpec) and isinstance(spec, ShellSpoutSpec)
    assert spec.component_object == thrift.ComponentObject(
        shell=thrift.ShellComponent(
            execution_command="streamparse_run", script=f"{__name__}.StandInSpout"
        )
    )


def test_python_bolt_spec_is_a_shell_bolt_spec():
    spec = StandInBolt.spec(inputs=[])
    assert isinstance(spec, PythonBoltSpec) and isinstance(spec, ShellBoltSpec)
    assert spec.component_cls is StandInBolt


def test_shell_spec_requires_command():
    with pytest.raises(InvalidTopologyValue, match="needs command="):
        ShellSpoutSpec(StandInSpout, command="", script="x.js")


def test_shell_spec_script_none_is_a_type_error():
    with pytest.raises(InvalidTopologyType, match="'' if it takes none"):
        ShellBoltSpec(StandInBolt, command="node", script=None)


def test_shell_spec_accepts_empty_script():
    spec = ShellSpoutSpec(StandInSpout, command="./run.sh", script="")
    assert spec.component_object.shell == thrift.ShellComponent("./run.sh", "")


def test_java_spec_with_class_name_converts_arguments():
    spec = JavaBoltSpec(StandInBolt, full_class_name="org.x.Y", args_list=[True, 7, b"b", "s", 1.5])
    java = spec.component_object.java_object
    assert java.full_class_name == "org.x.Y"
    assert java.args_list == [
        thrift.JavaObjectArg(bool_arg=True),
        thrift.JavaObjectArg(long_arg=7),
        thrift.JavaObjectArg(binary_arg=b"b"),
        thrift.JavaObjectArg(string_arg="s"),
        thrift.JavaObjectArg(double_arg=1.5),
    ]


def test_java_spec_with_serialized_java():
    spec = JavaSpoutSpec(StandInSpout, serialized_java=b"\xac\xed")
    assert spec.component_object == thrift.ComponentObject(serialized_java=b"\xac\xed")


def test_java_spec_serialized_java_must_be_bytes():
    with pytest.raises(InvalidTopologyType, match="serialized_java must be bytes"):
        JavaSpoutSpec(StandInSpout, serialized_java="abc")


def test_java_spec_needs_class_name():
    with pytest.raises(InvalidTopologyValue, match="full_class_name"):
        JavaSpoutSpec(StandInSpout, args_list=[])


def test_java_spec_args_list_none_is_a_type_error():
    with pytest.raises(InvalidTopologyType, match="args_list"):
        JavaSpoutSpec(StandInSpout, full_class_name="org.x.Y")


def test_java_spec_argument_of_unsupported_type_is_a_type_error():
    with pytest.raises(InvalidTopologyType, match="given None"):
        JavaSpoutSpec(StandInSpout, full_class_name="org.x.Y", args_list=[None])


# --- attributes --------------------------------------------------------------------


def test_spec_attributes_have_streamparse_names_and_order():
    spec = StandInSpout.spec(name="words")
    assert list(vars(spec)) == [
        "component_cls",
        "name",
        "par",
        "config",
        "outputs",
        "inputs",
        "common",
        "component_object",
    ]
    assert spec.common == thrift.ComponentCommon(
        inputs={}, streams=spec.outputs, parallelism_hint=1, json_conf="{}"
    )


def test_spec_common_shares_inputs_dict_with_spec():
    spout = StandInSpout.spec(name="words")
    bolt = StandInBolt.spec(inputs=[spout])
    assert bolt.common.inputs is bolt.inputs


def test_spec_repr_shows_class_and_attributes():
    spec = StandInSpout.spec(name="words")
    assert repr(spec).startswith("PythonSpoutSpec(StandInSpout, name='words', par=1, config='{}'")


def test_specs_with_equal_attributes_are_distinct_dict_keys():
    # Unnamed specs stand in as componentIds of dict keys, so they must hash by identity.
    first, second = StandInSpout.spec(), StandInSpout.spec()
    assert len({first: 1, second: 2}) == 2
