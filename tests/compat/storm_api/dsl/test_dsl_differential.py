"""Differential tests: the same topology files through real streamparse and through ours.

Each definition below is written once against an ``Api`` and run on both sides. Valid
ones must produce the same specs (names, pars, configs, outputs, inputs, component
objects) and the same Flux document; invalid ones must raise the same built-in type.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import streamparse
import streamparse.thrift as sp_thrift

from compat.storm_api import shell, thrift
from compat.storm_api.dsl import (
    Grouping,
    Stream,
    Topology,
    TopologyDefinitionError,
    spec_for_bolt,
    spec_for_spout,
)

MODULE = "topologies.shared"  # both sides' classes claim it, so scripts compare equal


class StandInSpout:
    """Our side's Python spout: only what the DSL reads."""

    outputs = None
    par = 1
    config = None

    @classmethod
    def spec(cls, name=None, par=None, config=None):
        return spec_for_spout(cls, name=name, par=par, config=config)


class StandInBolt:
    outputs = None
    par = 1
    config = None

    @classmethod
    def spec(cls, name=None, inputs=None, par=None, config=None):
        return spec_for_bolt(cls, name=name, inputs=inputs, par=par, config=config)


@dataclass(frozen=True)
class Api:
    """One side's topology-building names, so a definition is written once."""

    label: str
    Topology: type
    Grouping: Any
    Stream: type
    GlobalStreamId: type
    spout_base: type
    bolt_base: type
    ShellSpout: type
    ShellBolt: type
    JavaSpout: type
    JavaBolt: type

    def spout(self, name: str, outputs: Any, **attrs: Any) -> type:
        return type(name, (self.spout_base,), {"outputs": outputs, "__module__": MODULE, **attrs})

    def bolt(self, name: str, outputs: Any = None, **attrs: Any) -> type:
        return type(name, (self.bolt_base,), {"outputs": outputs, "__module__": MODULE, **attrs})

    def topology(self, name: str, body: dict[str, Any]) -> type:
        return type(self.Topology)(name, (self.Topology,), body)


STREAMPARSE = Api(
    "streamparse",
    streamparse.Topology,
    streamparse.Grouping,
    streamparse.Stream,
    sp_thrift.GlobalStreamId,
    streamparse.Spout,
    streamparse.Bolt,
    streamparse.ShellSpout,
    streamparse.ShellBolt,
    streamparse.JavaSpout,
    streamparse.JavaBolt,
)
OURS = Api(
    "ours",
    Topology,
    Grouping,
    Stream,
    thrift.GlobalStreamId,
    StandInSpout,
    StandInBolt,
    shell.ShellSpout,
    shell.ShellBolt,
    shell.JavaSpout,
    shell.JavaBolt,
)


# --- normalising specs of either side ------------------------------------------------


def _plain(value: Any) -> Any:
    """A thrift value (either implementation) as plain Python data."""
    if type(value).__name__ == "NullStruct":
        return None
    if type(value).__name__ == "JavaObjectArg":
        return thrift.to_python_arg(value)
    if type(value).__name__ == "JavaObject":
        return (value.full_class_name, [thrift.to_python_arg(a) for a in value.args_list])
    return value


def _component_object(obj: Any) -> tuple:
    kind, value = thrift.union_field(obj)
    if kind == "shell":
        return ("shell", value.execution_command, value.script)
    return (kind, _plain(value))


def _role(spec: Any) -> str:
    names = [cls.__name__ for cls in type(spec).__mro__]
    kind = "java" if "JavaComponentSpec" in names else "shell"
    role = "bolt" if any(n.endswith("BoltSpec") for n in names) else "spout"
    return f"{kind} {role}"


def describe(topology: type) -> dict[str, Any]:
    """Everything the planner reads from a topology class, as plain data."""
    specs = []
    for spec in topology.specs:
        specs.append(
            {
                "role": _role(spec),
                "name": spec.name,
                "component": spec.component_cls.__name__,
                "par": spec.par,
                "config": spec.config,
                "outputs": {
                    stream: (list(info.output_fields), info.direct)
                    for stream, info in spec.outputs.items()
                },
                "inputs": [
                    (key.componentId, key.streamId, *thrift.union_field(grouping))
                    for key, grouping in spec.inputs.items()
                ],
                "common": (
                    spec.common.inputs is spec.inputs,
                    spec.common.streams is spec.outputs,
                    spec.common.parallelism_hint,
                    spec.common.json_conf,
                ),
                "component_object": _component_object(spec.component_object),
            }
        )
        specs[-1]["inputs"] = [
            (component, stream, kind, _plain(value))
            for component, stream, kind, value in specs[-1]["inputs"]
        ]
    return {
        "specs": specs,
        "config": topology.config,
        "spouts": list(topology.thrift_spouts),
        "bolts": list(topology.thrift_bolts),
    }


# --- valid topologies -----------------------------------------------------------------


def wordcount(api: Api) -> type:
    spout = api.spout("WordSpout", ["word"])
    bolt = api.bolt("WordCountBolt", ["word", "count"], par=2)

    class WordCount(api.Topology):
        word_spout = spout.spec()
        count_bolt = bolt.spec(inputs={word_spout: api.Grouping.fields("word")}, par=2)

    return WordCount


def every_grouping(api: Api) -> type:
    spout = api.spout(
        "EventSpout",
        ["user", "event", api.Stream(["reason"], name="errors"), api.Stream(["n"], "tasks", True)],
        config={"topology.max.spout.pending": 10},
    )
    direct_source = api.spout("DirectSpout", [api.Stream(["n"], direct=True)])
    sink = api.bolt("Sink", ["user", "total"], par={"prod": 4, "dev": 1})

    class EveryGrouping(api.Topology):
        config = {"topology.workers": 2, "topology.message.timeout.secs": 60}
        events = spout.spec(par=3)
        direct = direct_source.spec(name="direct_source")
        by_user = sink.spec(inputs={events: api.Grouping.fields(["user", "event"])})
        errors = sink.spec(
            inputs={
                events["errors"]: api.Grouping.GLOBAL,
                events["tasks"]: api.Grouping.DIRECT,
            },
            config={"topology.tick.tuple.freq.secs": 1},
        )
        broadcast = sink.spec(inputs={by_user: api.Grouping.ALL, errors: api.Grouping.NONE})
        local = sink.spec(inputs={broadcast["default"]: api.Grouping.LOCAL_OR_SHUFFLE})
        listed = sink.spec(inputs=[events, direct, by_user["default"]])
        single = sink.spec(inputs=(local,))
        one = sink.spec(inputs=listed)
        custom = sink.spec(
            inputs={
                events: api.Grouping.custom_object("org.x.MyGrouping", [1, "a", True, 2.5]),
                by_user: api.Grouping.custom_serialized(b"\xac\xed\x00"),
            }
        )

    return EveryGrouping


def cycle(api: Api) -> type:
    spout = api.spout("Source", ["x"])
    bolt = api.bolt("Step", ["x"])

    class Cycle(api.Topology):
        source = spout.spec()
        a_bolt = bolt.spec(
            inputs={
                source: api.Grouping.SHUFFLE,
                api.GlobalStreamId(componentId="b_bolt", streamId="default"): api.Grouping.fields(
                    "x"
                ),
            }
        )
        b_bolt = bolt.spec(inputs=[a_bolt])

    return Cycle


def shell_and_java(api: Api) -> type:
    class Mixed(api.Topology):
        words = api.ShellSpout.spec(
            command="node",
            script="words.js",
            outputs=["word", api.Stream(["line"], name="raw")],
            config={"a": [1, 2]},
        )
        java_spout = api.JavaSpout.spec(
            name="kafka", full_class_name="org.x.KafkaSpout", args_list=["topic", 3], outputs=["m"]
        )
        counter = api.ShellBolt.spec(
            command="python3",
            script="count.py",
            inputs={words: api.Grouping.fields("word"), words["raw"]: api.Grouping.SHUFFLE},
            par=4,
            outputs=["word", "count"],
        )
        writer = api.JavaBolt.spec(
            full_class_name="org.x.Writer",
            args_list=[b"cfg", False, 0.5],
            inputs=[counter, java_spout],
            par=2,
        )

    return Mixed


def named_outside_class(api: Api) -> type:
    spout = api.spout("Source", ["x"]).spec(name="src")
    bolt = api.bolt("Step", ["x"]).spec(name="step", inputs=[spout["default"]])
    return api.topology("Outside", {"s": spout, "b": bolt})


VALID = [wordcount, every_grouping, cycle, shell_and_java, named_outside_class]


@pytest.mark.parametrize("definition", VALID, ids=lambda f: f.__name__)
def test_same_topology_gives_same_specs_in_both_dsls(definition):
    assert describe(definition(OURS)) == describe(definition(STREAMPARSE))


@pytest.mark.parametrize("definition", VALID, ids=lambda f: f.__name__)
def test_same_topology_gives_same_flux_document_in_both_dsls(definition):
    assert definition(OURS).to_flux_dict("t") == definition(STREAMPARSE).to_flux_dict("t")


def test_differential_comparison_notices_a_different_grouping():
    def shuffled(api: Api) -> type:
        spout = api.spout("WordSpout", ["word"])
        bolt = api.bolt("WordCountBolt", ["word", "count"], par=2)

        class WordCount(api.Topology):
            word_spout = spout.spec()
            count_bolt = bolt.spec(inputs=[word_spout], par=2)

        return WordCount

    assert describe(shuffled(OURS)) != describe(wordcount(STREAMPARSE))


# --- invalid topologies -------------------------------------------------------------


def _with_spout(api: Api, **bolt_spec: Any) -> type:
    spout = api.spout("Source", ["x"])
    bolt = api.bolt("Step", ["x"])

    source = spout.spec()
    arguments = {k: (v(source) if callable(v) else v) for k, v in bolt_spec.items()}
    return api.topology("Broken", {"source": source, "step": bolt.spec(**arguments)})


def duplicate_name(api):
    spout = api.spout("Source", ["x"])
    return api.topology("Dup", {"a": spout.spec(name="s"), "b": spout.spec(name="s")})


def component_instance(api):
    spout = api.spout("Source", ["x"])
    return api.topology("Inst", {"a": spout.spec(), "b": api.ShellBolt.__new__(api.ShellBolt)})


def bolt_without_inputs(api):
    return _with_spout(api)


def bolt_with_empty_inputs(api):
    return _with_spout(api, inputs=[])


def spout_without_outputs(api):
    return api.topology("Quiet", {"a": api.spout("Source", None).spec()})


def no_spout(api):
    return api.topology(
        "NoSpout", {"b": api.bolt("Step", ["x"]).spec(inputs=[api.GlobalStreamId("a", "default")])}
    )


def unknown_grouping_field(api):
    return _with_spout(api, inputs=lambda s: {s: api.Grouping.fields("y")})


def topology_config_not_dict(api):
    return api.topology("Conf", {"config": "x", "a": api.spout("Source", ["x"]).spec()})


def _spout_spec(**kwargs):
    def define(api):
        return api.spout("Source", ["x"]).spec(**kwargs)

    define.__name__ = "spout_spec_" + "_".join(f"{k}_{v!r}" for k, v in kwargs.items())
    return define


def outputs_string(api):
    return api.ShellSpout.spec(command="node", script="", outputs="word")


def outputs_bad_entry(api):
    return api.ShellSpout.spec(command="node", script="", outputs=["word", 3])


def inputs_string(api):
    return _with_spout(api, inputs="source")


def inputs_list_of_strings(api):
    return _with_spout(api, inputs=["source"])


def inputs_dict_bad_value(api):
    return _with_spout(api, inputs=lambda s: {s: "shuffle"})


def inputs_dict_string_key(api):
    return _with_spout(api, inputs={"source": api.Grouping.SHUFFLE})


def inputs_bare_global_stream_id(api):
    return _with_spout(api, inputs=api.GlobalStreamId("source", "default"))


def unknown_stream_index(api):
    return _with_spout(api, inputs=lambda s: [s["missing"]])


def input_from_unknown_component(api):
    return _with_spout(api, inputs=[api.GlobalStreamId("nowhere", "default")])


def input_from_unknown_stream(api):
    return _with_spout(api, inputs=[api.GlobalStreamId("source", "missing")])


def input_global_stream_id_without_component(api):
    return _with_spout(api, inputs=[api.GlobalStreamId(None, "default")])


def list_input_from_spout_without_default_stream(api):
    spout = api.spout("Errors", [api.Stream(["e"], name="errors")])
    bolt = api.bolt("Step", ["x"])
    source = spout.spec()
    return api.topology("NoDefault", {"source": source, "step": bolt.spec(inputs=[source])})


def shell_without_command(api):
    return api.ShellSpout.spec(script="x.js", outputs=["a"])


def shell_script_none(api):
    return api.ShellBolt.spec(command="node", inputs=[api.GlobalStreamId("a", "default")])


def java_serialized_not_bytes(api):
    return api.JavaSpout.spec(serialized_java="abc", outputs=["a"])


def java_without_class_name(api):
    return api.JavaSpout.spec(args_list=[], outputs=["a"])


def java_args_none(api):
    return api.JavaSpout.spec(full_class_name="org.x.S", outputs=["a"])


def java_bad_argument(api):
    return api.JavaSpout.spec(full_class_name="org.x.S", args_list=[None], outputs=["a"])


def empty_fields_grouping(api):
    return api.Grouping.fields()


def stream_fields_string(api):
    return api.Stream("word")


def stream_name_not_str(api):
    return api.Stream(["a"], name=1)


def stream_direct_not_bool(api):
    return api.Stream(["a"], direct=1)


def custom_object_bad_argument(api):
    return api.Grouping.custom_object("org.x.G", [object()])


def custom_serialized_not_bytes(api):
    # streamparse returns its TypeError, which then fails as "not a Grouping" in the
    # spec; we raise at once. Either way the definition fails with a TypeError.
    return _with_spout(api, inputs=lambda s: {s: api.Grouping.custom_serialized("x")})


INVALID = [
    duplicate_name,
    component_instance,
    bolt_without_inputs,
    bolt_with_empty_inputs,
    spout_without_outputs,
    no_spout,
    unknown_grouping_field,
    topology_config_not_dict,
    _spout_spec(par=0),
    _spout_spec(par=-1),
    _spout_spec(par=5.4),
    _spout_spec(par="2"),
    _spout_spec(par={"prod": 0}),
    _spout_spec(par={"prod": "2"}),
    _spout_spec(par={1: 2}),
    _spout_spec(config='{"a": 1}'),
    _spout_spec(config=[("a", 1)]),
    outputs_string,
    outputs_bad_entry,
    inputs_string,
    inputs_list_of_strings,
    inputs_dict_bad_value,
    inputs_dict_string_key,
    inputs_bare_global_stream_id,
    unknown_stream_index,
    input_from_unknown_component,
    input_from_unknown_stream,
    input_global_stream_id_without_component,
    list_input_from_spout_without_default_stream,
    shell_without_command,
    shell_script_none,
    java_serialized_not_bytes,
    java_without_class_name,
    java_args_none,
    java_bad_argument,
    empty_fields_grouping,
    stream_fields_string,
    stream_name_not_str,
    stream_direct_not_bool,
    custom_object_bad_argument,
    custom_serialized_not_bytes,
]


def _builtin_kind(exc: BaseException) -> type:
    for kind in (KeyError, TypeError, ValueError):
        if isinstance(exc, kind):
            return kind
    return type(exc)


@pytest.mark.parametrize("definition", INVALID, ids=lambda f: f.__name__)
def test_invalid_definition_raises_same_exception_type_in_both_dsls(definition: Callable):
    with pytest.raises((KeyError, TypeError, ValueError)) as theirs:
        definition(STREAMPARSE)
    with pytest.raises(TopologyDefinitionError) as ours:
        definition(OURS)
    assert _builtin_kind(ours.value) is _builtin_kind(theirs.value)
