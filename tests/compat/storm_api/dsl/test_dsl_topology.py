"""The Topology metaclass: naming, wiring checks and the class attributes it sets."""

from __future__ import annotations

import pytest

from compat.storm_api import thrift
from compat.storm_api.dsl import Grouping, Stream, Topology, spec_for_bolt, spec_for_spout
from compat.storm_api.dsl.component import ComponentSpec
from compat.storm_api.dsl.errors import (
    InvalidTopologyKey,
    InvalidTopologyType,
    InvalidTopologyValue,
)


class StandInSpout:
    """Minimal spout class: the attributes and spec() the DSL relies on."""

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


class SilentSpout(StandInSpout):
    outputs = None


def test_spec_name_defaults_to_attribute_name():
    class Words(Topology):
        word_spout = StandInSpout.spec()
        counter = StandInBolt.spec(inputs=[word_spout])

    assert [spec.name for spec in Words.specs] == ["word_spout", "counter"]


def test_explicit_spec_name_wins_over_attribute_name():
    class Words(Topology):
        word_spout = StandInSpout.spec(name="words")
        counter = StandInBolt.spec(inputs=[word_spout])

    assert [spec.name for spec in Words.specs] == ["words", "counter"]
    assert list(Words.thrift_spouts) == ["words"]


def test_specs_are_listed_in_definition_order():
    class Words(Topology):
        zeta = StandInSpout.spec()
        alpha = StandInBolt.spec(inputs=[zeta])
        middle = StandInBolt.spec(inputs=[alpha])

    assert [spec.name for spec in Words.specs] == ["zeta", "alpha", "middle"]


def test_duplicate_component_name_is_a_value_error():
    with pytest.raises(ValueError, match="duplicate component name 'words'") as info:

        class Words(Topology):
            first = StandInSpout.spec(name="words")
            second = StandInSpout.spec(name="words")

    assert isinstance(info.value, InvalidTopologyValue)


def test_component_instance_instead_of_spec_is_a_type_error():
    from compat.storm_api.component import Component

    with pytest.raises(TypeError, match="spout = Component.spec") as info:

        class Words(Topology):
            spout = Component.__new__(Component)  # no streams touched

    assert isinstance(info.value, InvalidTopologyType)


def test_pystorm_component_instance_is_a_type_error_too():
    import pystorm

    with pytest.raises(InvalidTopologyType, match="component instance"):

        class Words(Topology):
            spout = pystorm.Spout.__new__(pystorm.Spout)


def test_attributes_that_are_not_specs_are_left_alone():
    class Words(Topology):
        spout = StandInSpout.spec()
        some_constant = 3

        def helper(self):
            return 1

    assert Words.some_constant == 3
    assert [spec.name for spec in Words.specs] == ["spout"]


def test_bolt_without_inputs_is_a_value_error():
    with pytest.raises(
        InvalidTopologyValue, match="'counter' is a bolt and needs at least one input"
    ):

        class Words(Topology):
            spout = StandInSpout.spec()
            counter = StandInBolt.spec()


def test_spout_without_outputs_is_a_value_error():
    with pytest.raises(
        InvalidTopologyValue, match="'spout' is a spout and needs at least one output"
    ):

        class Words(Topology):
            spout = SilentSpout.spec()


def test_spec_that_is_neither_spout_nor_bolt_is_a_type_error():
    with pytest.raises(InvalidTopologyType, match="neither a spout nor a bolt"):

        class Words(Topology):
            spout = StandInSpout.spec()
            odd = ComponentSpec(StandInSpout)


def test_topology_without_spout_is_a_value_error():
    with pytest.raises(
        InvalidTopologyValue, match="Topology Empty: a topology needs at least one spout"
    ):

        class Empty(Topology):
            pass


def test_class_named_topology_needs_no_spout_like_streamparse():
    with pytest.raises(ValueError):
        type(Topology)("NotTheBase", (Topology,), {})
    assert type(Topology)("Topology", (Topology,), {}).specs == []


def test_fields_grouping_on_unknown_field_is_a_value_error():
    with pytest.raises(
        InvalidTopologyValue,
        match="grouping field 'nope' is not an output field of the 'spout' 'default' stream",
    ):

        class Words(Topology):
            spout = StandInSpout.spec()
            counter = StandInBolt.spec(inputs={spout: Grouping.fields("nope")})


def test_fields_grouping_on_named_stream_checks_that_streams_fields():
    class TwoStreams(StandInSpout):
        outputs = ["word", Stream(["reason"], name="errors")]

    class Words(Topology):
        spout = TwoStreams.spec()
        counter = StandInBolt.spec(inputs={spout["errors"]: Grouping.fields("reason")})

    with pytest.raises(InvalidTopologyValue, match="'errors' stream"):

        class Broken(Topology):
            spout = TwoStreams.spec()
            counter = StandInBolt.spec(inputs={spout["errors"]: Grouping.fields("word")})


def test_input_from_component_outside_topology_is_a_key_error():
    loose = StandInSpout.spec(name="elsewhere")
    with pytest.raises(InvalidTopologyKey, match="'elsewhere', which is not a component"):

        class Words(Topology):
            spout = StandInSpout.spec()
            counter = StandInBolt.spec(inputs=[spout, loose])


def test_input_from_undeclared_stream_is_a_key_error():
    cycle = thrift.GlobalStreamId(componentId="spout", streamId="missing")
    with pytest.raises(KeyError, match="stream 'missing' of 'spout'"):

        class Words(Topology):
            spout = StandInSpout.spec()
            counter = StandInBolt.spec(inputs=[cycle])


def test_input_global_stream_id_without_component_is_a_type_error():
    with pytest.raises(InvalidTopologyType, match="componentId None"):

        class Words(Topology):
            spout = StandInSpout.spec()
            counter = StandInBolt.spec(inputs=[thrift.GlobalStreamId(None, "default")])


def test_unnamed_spec_references_are_replaced_by_names():
    class Words(Topology):
        spout = StandInSpout.spec()
        counter = StandInBolt.spec(inputs={spout: Grouping.fields("word")})

    counter = Words.specs[1]
    assert counter.inputs == {thrift.GlobalStreamId("spout", "default"): Grouping.fields("word")}
    assert thrift.GlobalStreamId("spout", "default") in counter.common.inputs


def test_shared_stream_reference_resolves_in_every_bolt():
    spout = StandInSpout.spec()
    shared = spout["default"]

    class Words(Topology):
        source = spout
        first = StandInBolt.spec(inputs=[shared])
        second = StandInBolt.spec(inputs=[shared])

    key = thrift.GlobalStreamId("source", "default")
    assert all(key in spec.inputs for spec in Words.specs[1:])


def test_cycle_declared_with_global_stream_id_is_accepted():
    class Loop(Topology):
        spout = StandInSpout.spec()
        a_bolt = StandInBolt.spec(
            inputs=[spout, thrift.GlobalStreamId(componentId="b_bolt", streamId="default")]
        )
        b_bolt = StandInBolt.spec(inputs=[a_bolt])

    assert thrift.GlobalStreamId("b_bolt", "default") in Loop.specs[1].inputs


def test_config_defaults_to_empty_dict():
    class Words(Topology):
        spout = StandInSpout.spec()

    assert Words.config == {}


def test_config_must_be_a_dict():
    with pytest.raises(InvalidTopologyType, match="Topology Words: config must be a dict"):

        class Words(Topology):
            config = '{"topology.workers": 2}'
            spout = StandInSpout.spec()


def test_config_dict_is_kept():
    class Words(Topology):
        config = {"topology.workers": 2}
        spout = StandInSpout.spec()

    assert Words.config == {"topology.workers": 2}


def test_thrift_attributes_describe_spouts_and_bolts():
    class Words(Topology):
        spout = StandInSpout.spec()
        counter = StandInBolt.spec(inputs=[spout], par=2)

    spout, counter = Words.specs
    assert Words.thrift_spouts == {
        "spout": thrift.SpoutSpec(spout_object=spout.component_object, common=spout.common)
    }
    assert Words.thrift_bolts == {
        "counter": thrift.Bolt(bolt_object=counter.component_object, common=counter.common)
    }
    assert Words.thrift_topology == thrift.StormTopology(
        spouts=Words.thrift_spouts, bolts=Words.thrift_bolts, state_spouts={}
    )
    assert Words.thrift_bolts["counter"].common.parallelism_hint == 2


def test_topology_class_repr_is_its_thrift_topology():
    class Words(Topology):
        spout = StandInSpout.spec()

    assert repr(Words) == repr(Words.thrift_topology)
    assert repr(Words).startswith("StormTopology(spouts={'spout': SpoutSpec(")


def test_flux_dict_describes_python_components_as_shell_components():
    class Words(Topology):
        spout = StandInSpout.spec(config={"topology.tick.tuple.freq.secs": 1})
        counter = StandInBolt.spec(inputs={spout: Grouping.fields("word")}, par=2)

    script = f"{__name__}."
    flux = Words.to_flux_dict("words")
    assert flux["name"] == "words"
    assert flux["spouts"] == [
        {
            "id": "spout",
            "className": "org.apache.storm.flux.wrappers.spouts.FluxShellSpout",
            "constructorArgs": [["streamparse_run", script + "StandInSpout"], ["word"]],
            "parallelism": 1,
            "configMethods": [
                {"name": "addComponentConfig", "args": ["topology.tick.tuple.freq.secs", 1]}
            ],
        }
    ]
    assert flux["bolts"][0]["parallelism"] == 2
    assert flux["streams"] == [
        {
            "from": "spout",
            "to": "counter",
            "grouping": {"streamId": "default", "type": "FIELDS", "args": ["word"]},
        }
    ]


def test_flux_dict_names_global_grouping_and_extra_streams():
    class TwoStreams(StandInSpout):
        outputs = ["word", Stream(["reason"], name="errors")]

    class Words(Topology):
        spout = TwoStreams.spec()
        counter = StandInBolt.spec(inputs={spout["errors"]: Grouping.GLOBAL})

    flux = Words.to_flux_dict("words")
    assert flux["spouts"][0]["configMethods"] == [
        {"name": "setNamedStream", "args": ["errors", ["reason"]]}
    ]
    assert flux["streams"][0]["grouping"] == {"streamId": "errors", "type": "GLOBAL"}
