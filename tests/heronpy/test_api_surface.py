"""heronpy.api's surface: names, signatures and defaults as heronpy 0.20.5 has them, its
checks and errors, and what a heronpy topology compiles to (no engine is started)."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from unittest import mock

import pytest

from heronpy.api import api_constants, global_metrics
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.bolt.window_bolt import SlidingWindowBolt, TumblingWindowBolt
from heronpy.api.component.component_spec import GlobalStreamId
from heronpy.api.component.translate import UnsupportedHeronpyFeature
from heronpy.api.custom_grouping import ICustomGrouping
from heronpy.api.metrics import (
    AssignableMetrics,
    CountMetric,
    MeanReducer,
    MultiCountMetric,
    MultiReducedMetric,
    ReducedMetric,
)
from heronpy.api.serializer import PythonSerializer, default_serializer
from heronpy.api.spout.spout import Spout
from heronpy.api.state.state import HashMapState, State
from heronpy.api.state.stateful_component import StatefulComponent
from heronpy.api.stream import Grouping, Stream
from heronpy.api.topology import Topology, TopologyBuilder, TopologyType

EXAMPLES = Path(__file__).parent / "examples" / "topologies"


class Words(Spout):
    outputs = ["word", Stream(fields=["msg"], name="error")]

    def next_tuple(self):
        self.emit(["w"], tup_id="id")


class Counter(Bolt):
    outputs = ["word", "count"]

    def process(self, tup):
        self.emit([tup.values[0], 1], anchors=[tup])


def test_signatures_and_defaults_are_heronpys():
    expected = {
        Spout.emit: "(self, tup, tup_id=None, stream='default', direct_task=None, "
                    "need_task_ids=False)",
        Bolt.emit: "(self, tup, stream='default', anchors=None, direct_task=None, "
                   "need_task_ids=False)",
        Spout.spec: "(name=None, par=1, config=None, optional_outputs=None)",
        Bolt.spec: "(name=None, inputs=None, par=1, config=None, optional_outputs=None)",
        Stream.__init__: "(self, fields=None, name='default', direct=False)",
        TopologyBuilder.add_spout: "(self, name, spout_cls, par, config=None, "
                                   "optional_outputs=None)",
        TopologyBuilder.add_bolt: "(self, name, bolt_cls, par, inputs, config=None, "
                                  "optional_outputs=None)",
    }
    for function, signature in expected.items():
        assert _plain(function) == signature, function


def _plain(function) -> str:
    params = inspect.signature(function).parameters.values()
    return "(" + ", ".join(p.name if p.default is inspect.Parameter.empty
                           else f"{p.name}={p.default!r}" for p in params) + ")"


def test_grouping_constants_and_fields_are_heronpys():
    assert (Grouping.SHUFFLE, Grouping.FIELDS(2, ["a"]).gtype, Grouping.ALL, Grouping.LOWEST,
            Grouping.NONE, Grouping.DIRECT) == (1, 2, 3, 4, 5, 6)
    assert Grouping.GLOBAL == Grouping.LOWEST and Grouping.LOCAL_OR_SHUFFLE == Grouping.SHUFFLE
    assert Grouping.fields("a", "b") == Grouping.fields(["a", "b"]) == (2, ["a", "b"])
    with pytest.raises(ValueError):
        Grouping.fields()
    with pytest.raises(TypeError):
        Grouping.fields(1)
    assert not Grouping.is_grouping_sane(Grouping.DIRECT)
    custom = Grouping.custom("my.module.Grouping")
    assert custom.gtype == 7 and default_serializer.deserialize(custom.python_serialized) == \
        "my.module.Grouping"
    with pytest.raises(NotImplementedError):
        Grouping.custom_object("java.Class", [])


def test_a_direct_stream_and_a_direct_subscription_are_refused_as_heronpy_refuses_them():
    with pytest.raises(NotImplementedError, match="Direct stream is not supported yet"):
        Stream(fields=["a"], direct=True)
    spout = Words.spec(name="words")
    with pytest.raises(ValueError, match="A given grouping is not supported"):
        TopologyType("T", (Topology,), {"words": spout,
                                        "bolt": Counter.spec(inputs={spout: Grouping.DIRECT})})


def test_metrics_report_and_reset_as_heronpys():
    count = CountMetric()
    count.incr()
    count.incr(4)
    assert (count.get_value_and_reset(), count.get_value_and_reset()) == (5, 0)
    multi = MultiCountMetric()
    multi.add_key("a")
    multi.incr("b", 2)
    assert multi.get_value_and_reset() == {"a": 0, "b": 2}
    mean = ReducedMetric(MeanReducer)
    assert mean.get_value_and_reset() is None
    for value in (1, 2, 6):
        mean.update(value)
    assert mean.get_value_and_reset() == 3.0
    multi_mean = MultiReducedMetric(MeanReducer)
    multi_mean.update("k", 4)
    assert multi_mean.get_value_and_reset() == {"k": 4.0}
    gauge = AssignableMetrics(7)
    gauge.update(9)
    assert (gauge.get_value_and_reset(), gauge.get_value_and_reset()) == (9, 9)
    assert callable(global_metrics.safe_incr) and global_metrics.root_name == "__auto__"


def test_state_is_the_engines_hash_map_state_with_heronpys_methods():
    state = HashMapState()
    state.put("a", 1)
    assert state.get("a") == 1 and state.get("missing") is None
    assert isinstance(state, State) and list(state.enumerate()) == [("a", 1)]
    state.clear()
    assert state.get("a") is None
    assert issubclass(SlidingWindowBolt, StatefulComponent)
    assert issubclass(TumblingWindowBolt, StatefulComponent)
    assert PythonSerializer().deserialize(PythonSerializer().serialize({"x": 1})) == {"x": 1}


def test_a_component_built_with_a_delegate_emits_through_it_positionally():
    delegate = mock.Mock()
    spout = Words(delegate=delegate)
    spout.emit(["w"], tup_id="id")
    delegate.emit.assert_called_once_with(["w"], "id", "default", None, False)
    bolt = Counter(delegate=delegate)
    bolt.emit(["w", 1], stream="s")
    delegate.emit.assert_called_with(["w", 1], "s", None, None, False)
    bolt.ack("t")
    delegate.ack.assert_called_once_with("t")
    assert bolt.is_tick(mock.Mock(stream="__tick")) and spout.logger is delegate.logger


def test_heronpys_definition_errors():
    with pytest.raises(ValueError, match="A Topology requires at least one Spout"):
        TopologyType("T", (Topology,), {"b": Counter.spec(inputs=[GlobalStreamId("x", "default")])})
    with pytest.raises(ValueError, match="requires at least one input, because it is a bolt"):
        TopologyType("T", (Topology,), {"s": Words.spec(), "b": Counter.spec()})
    with pytest.raises(ValueError, match="does not exist on this component"):
        Words.spec(name="s")["nope"]
    builder = TopologyBuilder("t")
    builder.add_spout("s", Words, 1)
    with pytest.raises(ValueError, match="duplicate spec name"):
        builder.add_spout("s", Words, 1)


def test_build_and_submit_outside_the_cli_says_how_a_main_is_run():
    builder = TopologyBuilder("t")
    builder.add_spout("s", Words, 1)
    with pytest.raises(RuntimeError, match="HERON_OPTIONS is not set"):
        builder.build_and_submit()


class FirstTask(ICustomGrouping):
    def prepare(self, context, component, stream, target_tasks):
        self.first = (context.get_task_id(), min(target_tasks))

    def choose_tasks(self, values):
        return [self.first[1]]


def test_a_custom_grouping_compiles_to_one_the_emitting_task_runs_with_herons_context():
    from engine.common.grouping import build_grouping
    from engine.common.plan.compiler import compile_topology

    spout = Words.spec(name="s")
    topology = TopologyType("T", (Topology,), {
        "s": spout, "b": Counter.spec(par=2, inputs={spout: Grouping.custom(FirstTask())})})
    (subscription,) = compile_topology(topology).plan.components["b"].inputs
    assert subscription.grouping == "custom"
    grouping = build_grouping("custom", [4, 3], consumer="b",
                              custom_grouping=subscription.custom_grouping)
    grouping.bind({"taskid": 1, "componentid": "s", "task->component": {"1": "s"}})
    assert grouping.choose(["w"]) == (3,)
    assert grouping._grouping.grouping.first == (1, 3)


def test_a_custom_grouping_class_path_that_does_not_import_is_refused_at_definition():
    spout = Words.spec(name="s")
    with pytest.raises(UnsupportedHeronpyFeature) as caught:
        TopologyType("T", (Topology,), {
            "s": spout, "b": Counter.spec(inputs={spout: Grouping.custom("no.such.G")})})
    (line,) = str(caught.value).splitlines()
    assert "bolt 'b' subscribing to 's'" in line and "'no.such.G'" in line


def test_a_topology_compiles_with_herons_typed_config_and_the_tick_it_runs_on():
    from engine.common.plan.compiler import compile_topology

    spout = Words.spec(name="words", par=2)

    class T(Topology):
        config = {api_constants.TOPOLOGY_RELIABILITY_MODE: "ATLEAST_ONCE", "n": "5"}
        words = spout
        count = Counter.spec(par=3, inputs={spout: Grouping.fields("word"),
                                            spout["error"]: Grouping.ALL},
                             config={api_constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 10})

    plan = compile_topology(T).plan
    assert plan.config["n"] == 5 and plan.config["topology.max.spout.pending"] == 100
    assert plan.config["topology.debug"] is False
    count = plan.components["count"]
    assert count.parallelism == 3
    assert {(i.source, i.stream, i.grouping) for i in count.inputs} == {
        ("words", "default", "fields"), ("words", "error", "all")}
    assert count.config["topology.tick.tuple.freq.secs"] == 1.0
    assert count.config["heronpy.tick.tuple.freq.secs"] == 10
    assert plan.components["words"].outputs["error"].fields == ("msg",)


def test_discovery_takes_a_builder_script_and_a_topology_class(isolated_imports):
    from engine.common.plan.discovery import is_topology_class, load_topology_class

    built = load_topology_class(EXAMPLES / "word_count_topology.py")
    assert built.__name__ == "word_count_topology" and is_topology_class(built)
    assert [s.name for s in built.specs] == ["word_spout", "count_bolt"]
    assert built.config["topology.reliability.mode"] == "ATLEAST_ONCE"
    assert load_topology_class(EXAMPLES / "multi_stream_topology.py").__name__ == "MultiStream"
    assert not is_topology_class(Topology)
    assert sys.argv[1:] != ["word_count_topology"]  # argv given back


def test_a_heronpy_file_that_never_submits_is_one_clear_error(isolated_imports, tmp_path):
    from engine.common.plan.discovery import load_topology_class
    from engine.common.plan.errors import NoTopologyClassError, TopologyImportError

    quiet = tmp_path / "quiet.py"
    quiet.write_text("from heronpy.api.topology import TopologyBuilder\n")
    with pytest.raises(NoTopologyClassError, match="never called build_and_submit"):
        load_topology_class(quiet)
    exits = tmp_path / "exits.py"
    exits.write_text("import sys\nfrom heronpy.api.topology import TopologyBuilder\n"
                     "if __name__ == '__main__':\n    sys.exit(1)\n")
    with pytest.raises(TopologyImportError, match="exited"):
        load_topology_class(exits)


def test_get_protobuf_gives_herons_messages_that_builders_inspect():
    from engine.messages import topology_pb2

    spout = Words.spec(name="words", par=2)
    bolt = Counter.spec(name="count", inputs={spout: Grouping.fields("word"),
                                              spout["error"]: Grouping.ALL},
                        config={"n": 3, "rows": [1, 2]})
    message = bolt.get_protobuf()
    assert isinstance(message, topology_pb2.Bolt) and message.comp.name == "count"
    assert [(i.stream.component_name, i.stream.id, i.gtype) for i in message.inputs] == [
        ("words", "default", topology_pb2.FIELDS), ("words", "error", topology_pb2.ALL)]
    assert [k.key for k in message.inputs[0].grouping_fields.keys] == ["word"]
    config = {kv.key: kv for kv in message.comp.config.kvs}
    assert config["n"].value == "3"
    assert default_serializer.deserialize(config["rows"].serialized_value) == [1, 2]
    out = spout.get_protobuf()
    assert isinstance(out, topology_pb2.Spout)
    assert [(o.stream.id, [k.key for k in o.schema.keys]) for o in out.outputs] == \
        [("default", ["word"]), ("error", ["msg"])]
    with pytest.raises(RuntimeError, match="no name yet"):
        Words.spec().get_protobuf()
