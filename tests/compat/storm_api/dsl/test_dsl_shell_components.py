"""ShellSpout, ShellBolt, JavaSpout, JavaBolt: streamparse's spec() signatures and defaults."""

from __future__ import annotations

import inspect

import pytest

from compat.storm_api import thrift
from compat.storm_api.component import Component
from compat.storm_api.dsl import Grouping, Stream, Topology
from compat.storm_api.dsl.component import (
    JavaBoltSpec,
    JavaSpoutSpec,
    ShellBoltSpec,
    ShellSpoutSpec,
)
from compat.storm_api.shell import JavaBolt, JavaSpout, ShellBolt, ShellSpout


@pytest.mark.parametrize(
    ("cls", "parameters"),
    [
        (ShellSpout, "name=None, command=None, script=None, par=None, config=None, outputs=None"),
        (
            ShellBolt,
            "name=None, command=None, script=None, inputs=None, par=None, config=None, "
            "outputs=None",
        ),
        (
            JavaSpout,
            "name=None, serialized_java=None, full_class_name=None, args_list=None, par=1, "
            "config=None, outputs=None",
        ),
        (
            JavaBolt,
            "name=None, serialized_java=None, full_class_name=None, args_list=None, "
            "inputs=None, par=1, config=None, outputs=None",
        ),
    ],
)
def test_spec_signature_matches_streamparse(cls, parameters):
    signature = inspect.signature(cls.spec)
    rendered = ", ".join(
        f"{name}={param.default!r}" for name, param in signature.parameters.items()
    )
    assert rendered == parameters
    assert issubclass(cls, Component)


def test_shell_spout_spec_takes_outputs_from_argument():
    spec = ShellSpout.spec(command="node", script="spout.js", outputs=["a", Stream(["e"], "err")])
    assert isinstance(spec, ShellSpoutSpec)
    assert spec.outputs == {
        "default": thrift.StreamInfo(["a"], False),
        "err": thrift.StreamInfo(["e"], False),
    }
    assert spec.component_object.shell == thrift.ShellComponent("node", "spout.js")


def test_shell_spout_par_none_falls_back_to_class_par():
    class Wide(ShellSpout):
        par = 3

    assert Wide.spec(command="node", script="", outputs=["a"]).par == 3


def test_shell_bolt_spec_builds_a_shell_bolt_spec():
    spout = ShellSpout.spec(name="s", command="node", script="s.js", outputs=["a"])
    spec = ShellBolt.spec(command="node", script="b.js", inputs={spout: Grouping.fields("a")})
    assert isinstance(spec, ShellBoltSpec)
    assert spec.inputs == {thrift.GlobalStreamId("s", "default"): Grouping.fields("a")}


def test_java_spout_ignores_class_par_because_its_default_is_one():
    class Wide(JavaSpout):
        par = 3

    assert Wide.spec(full_class_name="org.x.S", args_list=[], outputs=["a"]).par == 1


def test_java_bolt_spec_builds_a_java_bolt_spec():
    spec = JavaBolt.spec(
        serialized_java=b"\xac\xed", inputs=[thrift.GlobalStreamId("s", "default")]
    )
    assert isinstance(spec, JavaBoltSpec)
    assert spec.component_object.serialized_java == b"\xac\xed"


def test_java_spout_spec_is_a_java_spout_spec():
    assert isinstance(JavaSpout.spec(full_class_name="org.x.S", args_list=[1]), JavaSpoutSpec)


def test_shell_and_java_components_form_a_topology():
    class Mixed(Topology):
        words = ShellSpout.spec(command="node", script="words.js", outputs=["word"])
        counter = JavaBolt.spec(
            full_class_name="org.x.Counter", args_list=[10], inputs={words: Grouping.fields("word")}
        )

    assert list(Mixed.thrift_spouts) == ["words"]
    assert list(Mixed.thrift_bolts) == ["counter"]

