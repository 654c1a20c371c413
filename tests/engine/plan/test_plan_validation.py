"""Every planning rule, one test each: the error type and that its message names the culprit."""

from __future__ import annotations

import pytest

from engine.common.plan import errors
from engine.common.plan.logical import ComponentDef, InputDef, LogicalPlan, StreamDef


def streams(component: str, **declared: tuple[str, ...]) -> dict[str, StreamDef]:
    return {name: StreamDef(component, name, fields) for name, fields in declared.items()}


def spout(name: str = "spout", **kw) -> ComponentDef:
    kw.setdefault("outputs", streams(name, default=("word",)))
    kw.setdefault("python_class", "spouts:WordSpout")
    return ComponentDef(name=name, kind="spout", parallelism=kw.pop("parallelism", 1), **kw)


def bolt(name: str, *inputs: InputDef, **kw) -> ComponentDef:
    kw.setdefault("outputs", streams(name, default=("word", "count")))
    kw.setdefault("python_class", "bolts:CountBolt")
    return ComponentDef(
        name=name, kind="bolt", parallelism=kw.pop("parallelism", 1), inputs=inputs, **kw
    )


def plan(*components: ComponentDef) -> LogicalPlan:
    return LogicalPlan("wc", components)


def test_a_valid_word_count_plan_is_accepted():
    built = plan(spout(), bolt("count", InputDef("spout", grouping="fields", fields=("word",))))
    assert list(built.components) == ["spout", "count"]


def test_unknown_source_component_is_named_with_the_subscriber():
    with pytest.raises(errors.UnknownComponentError) as caught:
        plan(spout(), bolt("count", InputDef("splitter")))
    assert "'count'" in str(caught.value) and "'splitter'" in str(caught.value)
    assert caught.value.component == "count"


def test_unknown_stream_names_the_stream_and_the_declared_ones():
    with pytest.raises(errors.UnknownStreamError) as caught:
        plan(spout(), bolt("count", InputDef("spout", stream="words")))
    message = str(caught.value)
    assert "'words'" in message and "'spout'" in message and "['default']" in message
    assert caught.value.stream == "words"


def test_unknown_field_in_fields_grouping_names_the_field_and_the_stream_fields():
    with pytest.raises(errors.UnknownFieldError) as caught:
        plan(spout(), bolt("count", InputDef("spout", grouping="fields", fields=("wrd",))))
    message = str(caught.value)
    assert "'wrd'" in message and "['word']" in message and "'count'" in message
    assert caught.value.field == "wrd"


def test_spout_without_outputs_is_rejected():
    with pytest.raises(errors.MissingOutputsError, match="spout 'spout' declares no output"):
        plan(spout(outputs={}))


def test_bolt_without_inputs_is_rejected():
    with pytest.raises(errors.MissingInputsError, match="bolt 'count' has no inputs"):
        plan(spout(), bolt("count"))


def test_spout_with_inputs_is_rejected():
    with pytest.raises(errors.SpoutInputsError, match="spout 'second'.*cannot have inputs"):
        plan(spout(), spout("second", inputs=(InputDef("spout"),)))


def test_duplicate_component_names_are_rejected():
    with pytest.raises(errors.DuplicateComponentError, match="two components named 'count'"):
        plan(spout(), bolt("count", InputDef("spout")), bolt("count", InputDef("spout")))


def test_duplicate_field_in_a_stream_is_rejected():
    with pytest.raises(errors.DuplicateFieldError) as caught:
        plan(spout(outputs=streams("spout", default=("word", "word"))))
    assert "'word' twice on stream 'default'" in str(caught.value)


def test_direct_grouping_on_a_stream_not_declared_direct_is_rejected():
    with pytest.raises(errors.DirectGroupingError) as caught:
        plan(spout(), bolt("count", InputDef("spout", grouping="direct")))
    message = str(caught.value)
    assert "'count'" in message and "'default'" in message and "direct=True" in message


def test_direct_grouping_on_a_direct_stream_is_accepted():
    direct = {"default": StreamDef("spout", "default", ("word",), direct=True)}
    built = plan(spout(outputs=direct), bolt("count", InputDef("spout", grouping="direct")))
    assert built.components["spout"].outputs["default"].direct


def test_regular_grouping_on_a_direct_stream_is_accepted_as_storm_does():
    # Storm checks this only when an emit happens; streamparse itself produces it for
    # inputs=[spec["stream"]] on a direct stream.
    direct = {"default": StreamDef("spout", "default", ("word",), direct=True)}
    built = plan(spout(outputs=direct), bolt("count", InputDef("spout", grouping="shuffle")))
    assert built.consumers("spout")[0][1].grouping == "shuffle"


@pytest.mark.parametrize("bad", [0, -1, 5.4, True, "2"])
def test_parallelism_must_be_a_positive_integer(bad):
    with pytest.raises(errors.InvalidParallelismError) as caught:
        plan(spout(parallelism=bad))
    assert "spout 'spout' has parallelism" in str(caught.value)


def test_system_component_names_are_reserved():
    with pytest.raises(errors.ReservedNameError, match="'__acker' is reserved"):
        plan(spout(), bolt("__acker", InputDef("spout")))


def test_system_stream_names_are_reserved():
    with pytest.raises(errors.ReservedNameError) as caught:
        plan(spout(outputs=streams("spout", default=("w",), __tick=("t",))))
    assert "'__tick'" in str(caught.value) and caught.value.stream == "__tick"


def test_cycle_on_default_streams_is_rejected_and_lists_its_components():
    with pytest.raises(errors.CycleError) as caught:
        plan(
            spout(),
            bolt("a", InputDef("spout"), InputDef("c")),
            bolt("b", InputDef("a")),
            bolt("c", InputDef("b")),
        )
    assert caught.value.cycle == ("a", "b", "c", "a")
    assert "a -> b -> c -> a" in str(caught.value)


def test_bolt_subscribing_to_its_own_default_stream_is_a_cycle():
    with pytest.raises(errors.CycleError, match="loop -> loop"):
        plan(spout(), bolt("loop", InputDef("spout"), InputDef("loop")))


def test_cycle_through_a_named_stream_is_allowed():
    feedback = streams("b", default=("x",), feedback=("x",))
    built = plan(
        spout(),
        bolt("a", InputDef("spout"), InputDef("b", stream="feedback")),
        bolt("b", InputDef("a"), outputs=feedback),
    )
    assert [c.name for c, _ in built.consumers("b", "feedback")] == ["a"]


def test_fields_grouping_without_fields_is_rejected():
    with pytest.raises(errors.InvalidGroupingError, match="names no field"):
        plan(spout(), bolt("count", InputDef("spout", grouping="fields")))


def test_unknown_grouping_name_is_rejected():
    with pytest.raises(errors.InvalidGroupingError, match="'partial_key'"):
        plan(spout(), bolt("count", InputDef("spout", grouping="partial_key")))


def test_fields_on_a_non_fields_grouping_are_rejected():
    with pytest.raises(errors.InvalidGroupingError, match="only a fields grouping takes fields"):
        plan(spout(), bolt("count", InputDef("spout", grouping="shuffle", fields=("word",))))


def test_custom_grouping_needs_a_class():
    with pytest.raises(errors.InvalidGroupingError, match="no grouping class"):
        plan(spout(), bolt("count", InputDef("spout", grouping="custom")))


def test_subscribing_twice_to_the_same_stream_is_rejected():
    with pytest.raises(errors.InvalidGroupingError, match="subscribes twice to stream 'default'"):
        plan(spout(), bolt("count", InputDef("spout"), InputDef("spout", grouping="all")))


def test_config_values_must_be_json():
    with pytest.raises(errors.InvalidConfigError) as caught:
        spout(config={"my.handler": object()})
    assert "'my.handler'" in str(caught.value) and "spout 'spout'" in str(caught.value)


def test_topology_config_values_must_be_json():
    with pytest.raises(errors.InvalidConfigError, match="topology 'wc': config key 'when'"):
        LogicalPlan("wc", [spout()], {"when": {1, 2}})


def test_component_config_may_not_set_the_parallelism_key():
    with pytest.raises(errors.InvalidConfigError, match="topology.component.parallelism"):
        plan(spout(config={"topology.component.parallelism": 3}))


def test_component_needs_a_python_class_or_a_shell_command():
    with pytest.raises(errors.InvalidComponentError, match="spout 'spout' has no implementation"):
        plan(spout(python_class=None))


def test_component_kind_must_be_spout_or_bolt():
    with pytest.raises(errors.InvalidComponentError, match="kind 'sink'"):
        plan(ComponentDef("out", "sink", 1, python_class="x:Y"))


def test_every_planning_error_is_a_planning_error():
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.PlanningError), name
