"""A Python custom grouping, run by the emitting task: built from a class path or
unpickled, prepared once with the emitter's context and the consumer's sorted tasks,
and every choice checked (a task that is not the consumer's is an error naming the
grouping, never a tuple sent nowhere)."""

from __future__ import annotations

import base64
import pickle

import pytest

from engine.common.grouping import GroupingError, build_grouping
from engine.common.grouping.custom import CustomGrouping, load_custom_grouping
from engine.stmgr.routes import build_routes
from engine.stmgr.routing import DIRECT


class Modulo:
    """Chooses ``tasks[value % n]``; remembers what ``prepare`` was told."""

    def prepare(self, context, component, stream, target_tasks):
        self.prepared = (context, component, stream, target_tasks)

    def choose_tasks(self, values):
        return [self.prepared[3][values[0] % len(self.prepared[3])]]


class Returns:
    def __init__(self, result):
        self.result = result

    def prepare(self, context, component, stream, target_tasks):
        pass

    def choose_tasks(self, values):
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def pickled(obj) -> str:
    return "pickle:" + base64.b64encode(pickle.dumps(obj)).decode()


def test_a_class_path_grouping_is_prepared_once_with_the_context_and_sorted_tasks():
    grouping = build_grouping("custom", [7, 5, 6], consumer="count", stream="words",
                              custom_grouping=f"{__name__}:Modulo")
    assert isinstance(grouping, CustomGrouping) and grouping.chosen_by_emitter
    grouping.bind({"taskid": 3})
    assert [grouping.choose([n]) for n in range(4)] == [(5,), (6,), (7,), (5,)]
    assert grouping._grouping.prepared == ({"taskid": 3}, "count", "words", [5, 6, 7])


def test_a_pickled_grouping_keeps_its_state_and_may_choose_several_tasks():
    grouping = CustomGrouping([1, 2, 3], pickled(Returns([1, 3])), "count")
    assert grouping.choose(["a"]) == (1, 3)
    assert CustomGrouping([1, 2], pickled(Returns([])), "count").choose(["a"]) == ()


@pytest.mark.parametrize("result, words", [
    ([4], "returned 4, not one of its tasks [1, 2, 3]"),
    (["1"], "returned '1', not one of its tasks"),
    ({1}, "returned set, not a list of task ids"),
    (ValueError("no"), "raised in choose_tasks(): ValueError: no"),
])
def test_a_bad_choice_is_an_error_naming_the_grouping_and_the_consumer(result, words):
    grouping = CustomGrouping([1, 2, 3], pickled(Returns(result)), "count")
    with pytest.raises(GroupingError) as caught:
        grouping.choose(["a"])
    assert words in str(caught.value) and "'count'" in str(caught.value)


@pytest.mark.parametrize("spec, words", [
    ("no.such.module:G", "cannot be built: ModuleNotFoundError"),
    (f"{__name__}:Nope", "cannot be built: AttributeError"),
    ("just_a_name", "name the class as 'module:QualName'"),
    ("pickle:%%%", "not base64"),
    ("pickle:" + base64.b64encode(b"not a pickle").decode(), "does not load here"),
    (pickled("a string"), "has no prepare() method"),
])
def test_a_grouping_that_cannot_be_had_says_why(spec, words):
    with pytest.raises(GroupingError, match=None) as caught:
        load_custom_grouping(spec)
    assert words in str(caught.value)


def test_the_stream_manager_routes_a_custom_subscription_only_by_the_emitters_choice():
    from engine.common.plan.definitions import ComponentDef, InputDef, StreamDef
    from engine.common.plan.logical import LogicalPlan

    spout = ComponentDef("words", "spout", 1,
                         outputs={"default": StreamDef("words", "default", ("word",))},
                         python_class="m:S")
    bolt = ComponentDef("count", "bolt", 2, python_class="m:B",
                        inputs=(InputDef("words", "default", "custom",
                                         custom_grouping=f"{__name__}:Modulo"),))
    plan = LogicalPlan("t", [spout, bolt])
    (route,) = build_routes(plan, {"words": [1], "count": [2, 3]}, set())[("words", "default")]
    assert (route.kind, route.tasks) == (DIRECT, (2, 3))
