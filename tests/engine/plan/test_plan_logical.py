"""The LogicalPlan model: queries, immutability, and the round trip through protobuf."""

from __future__ import annotations

import pickle

import pytest

from engine.common.plan import errors
from engine.common.plan.logical import ComponentDef, InputDef, LogicalPlan, StreamDef
from engine.messages import topology_pb2 as pb


def full_plan() -> LogicalPlan:
    """One of everything: streams, direct, every grouping, shell and Python components."""
    sentences = ComponentDef(
        name="sentences",
        kind="spout",
        parallelism=2,
        config={"spout.rate": 10.5, "tags": ["a", "b"]},
        outputs={
            "default": StreamDef("sentences", "default", ("sentence",)),
            "errors": StreamDef("sentences", "errors", ("error", "at")),
            "targeted": StreamDef("sentences", "targeted", ("sentence",), direct=True),
        },
        python_class="spouts.sentences:SentenceSpout",
        shell=("streamparse_run", "spouts.sentences.SentenceSpout"),
    )
    split = ComponentDef(
        name="split",
        kind="bolt",
        parallelism=3,
        outputs={"default": StreamDef("split", "default", ("word", "position"))},
        inputs=(InputDef("sentences", "default", "local_or_shuffle"),),
        shell=("node", "split.js"),
    )
    count = ComponentDef(
        name="count",
        kind="bolt",
        parallelism=4,
        config={"nested": {"deep": [1, {"x": None}]}},
        outputs={"default": StreamDef("count", "default", ("word", "count"))},
        inputs=(
            InputDef("split", "default", "fields", ("word",)),
            InputDef("sentences", "targeted", "direct"),
        ),
        python_class="bolts.count:CountBolt",
    )
    sinks = [
        ComponentDef(
            name=f"sink_{grouping}",
            kind="bolt",
            parallelism=1,
            inputs=(InputDef("count", "default", grouping, custom_grouping=custom),),
            python_class="bolts.sink:Sink",
        )
        for grouping, custom in [
            ("all", None),
            ("global", None),
            ("none", None),
            ("shuffle", None),
            ("custom", "groupings:ByLength"),
        ]
    ]
    errors_sink = ComponentDef(
        name="errors_sink",
        kind="bolt",
        parallelism=1,
        inputs=(InputDef("sentences", "errors", "fields", ("error", "at")),),
        python_class="bolts.sink:Sink",
    )
    return LogicalPlan(
        "sentences-topology",
        [sentences, split, count, *sinks, errors_sink],
        {"topology.message.timeout.secs": 30, "topology.debug": False, "my.list": [1, "two"]},
    )


def test_plan_survives_proto_round_trip():
    original = full_plan()
    assert LogicalPlan.from_proto(original.to_proto()) == original


def test_plan_survives_bytes_round_trip():
    original = full_plan()
    assert LogicalPlan.from_bytes(original.to_bytes()) == original


def test_bytes_are_deterministic():
    assert full_plan().to_bytes() == full_plan().to_bytes()


def test_round_trip_keeps_definition_order_across_spouts_and_bolts():
    original = full_plan()
    round_tripped = LogicalPlan.from_bytes(original.to_bytes())
    assert list(round_tripped.components) == list(original.components)


def test_proto_uses_heron_shapes():
    message = full_plan().to_proto(topology_id="sentences-topology-1234")
    assert message.id == "sentences-topology-1234" and message.state == pb.RUNNING
    count = next(b for b in message.bolts if b.comp.name == "count")
    assert count.comp.spec == pb.PYTHON_CLASS_NAME
    assert count.comp.class_name == "bolts.count:CountBolt"
    parallelism = {kv.key: kv.value for kv in count.comp.config.kvs}[
        "topology.component.parallelism"
    ]
    assert parallelism == "4"
    global_sink = next(b for b in message.bolts if b.comp.name == "sink_global")
    assert global_sink.inputs[0].gtype == pb.LOWEST
    split = next(b for b in message.bolts if b.comp.name == "split")
    assert split.comp.spec == pb.SHELL_COMMAND and split.comp.shell.script == "split.js"
    assert split.inputs[0].gtype == pb.LOCAL_OR_SHUFFLE


def test_config_values_are_stored_as_json_text():
    message = full_plan().to_proto()
    kvs = {kv.key: kv for kv in message.topology_config.kvs}
    assert kvs["my.list"].value == '[1, "two"]'
    assert kvs["my.list"].type == pb.JSON_VALUE


def test_heron_plain_string_config_is_read_as_a_string_and_parallelism_parsed():
    message = full_plan().to_proto()
    message.topology_config.kvs.add(key="heron.key", value="not json", type=pb.STRING_VALUE)
    spout_config = message.spouts[0].comp.config
    del spout_config.kvs[:]
    spout_config.kvs.add(key="topology.component.parallelism", value="5")  # Heron's way
    plan = LogicalPlan.from_proto(message)
    assert plan.config["heron.key"] == "not json"
    assert plan.components["sentences"].parallelism == 5


def test_reading_bytes_that_are_not_a_topology_fails_clearly():
    with pytest.raises(
        errors.MalformedPlanError, match="not a serialized heron.proto.api.Topology"
    ):
        LogicalPlan.from_bytes(b"\xff\xff\xff")


def test_reading_a_java_component_fails_clearly():
    message = full_plan().to_proto()
    message.bolts[0].comp.spec = pb.JAVA_CLASS_NAME
    with pytest.raises(errors.MalformedPlanError, match="JAVA_CLASS_NAME"):
        LogicalPlan.from_proto(message)


def test_reading_an_input_without_grouping_fails_clearly():
    message = full_plan().to_proto()
    message.bolts[0].inputs[0].ClearField("gtype")
    with pytest.raises(errors.MalformedPlanError, match="no grouping"):
        LogicalPlan.from_proto(message)


def test_reading_an_invalid_plan_raises_the_validation_error():
    message = full_plan().to_proto()
    message.bolts[0].inputs[0].stream.component_name = "ghost"
    with pytest.raises(errors.UnknownComponentError, match="'ghost'"):
        LogicalPlan.from_proto(message)


def test_consumers_lists_subscribers_of_a_stream_in_definition_order():
    plan = full_plan()
    names = [component.name for component, _ in plan.consumers("count")]
    assert names == ["sink_all", "sink_global", "sink_none", "sink_shuffle", "sink_custom"]
    assert plan.consumers("sentences", "targeted")[0][1].grouping == "direct"
    assert plan.consumers("count", "nothing") == []


def test_key_field_sets_lists_each_distinct_fields_grouping_once():
    spout = ComponentDef(
        "s",
        "spout",
        1,
        outputs={"default": StreamDef("s", "default", ("a", "b"))},
        python_class="m:S",
    )
    bolts = [
        ComponentDef(
            f"b{i}", "bolt", 1, inputs=(InputDef("s", "default", g, f),), python_class="m:B"
        )
        for i, (g, f) in enumerate(
            [("fields", ("a",)), ("shuffle", ()), ("fields", ("a", "b")), ("fields", ("a",))]
        )
    ]
    plan = LogicalPlan("t", [spout, *bolts])
    assert plan.key_field_sets("s") == (("a",), ("a", "b"))


def test_spouts_and_bolts_split_the_components():
    plan = full_plan()
    assert list(plan.spouts) == ["sentences"]
    assert "sentences" not in plan.bolts and len(plan.bolts) == len(plan.components) - 1


def test_plan_and_definitions_are_immutable():
    plan = full_plan()
    with pytest.raises(AttributeError):
        plan.name = "other"
    with pytest.raises(TypeError):
        plan.components["x"] = None  # type: ignore[index]
    with pytest.raises(TypeError):
        plan.config["topology.debug"] = True  # type: ignore[index]
    with pytest.raises(AttributeError):
        plan.components["count"].parallelism = 9  # type: ignore[misc]


def test_config_is_normalized_through_json():
    plan = LogicalPlan(
        "t",
        [
            ComponentDef(
                "s",
                "spout",
                1,
                outputs={"default": StreamDef("s", "default", ("a",))},
                python_class="m:S",
            )
        ],
        {"pair": (1, 2), "by_id": {1: "x"}},
    )
    assert plan.config["pair"] == [1, 2]
    assert plan.config["by_id"] == {"1": "x"}


def test_plan_pickles():
    plan = full_plan()
    assert pickle.loads(pickle.dumps(plan)) == plan
