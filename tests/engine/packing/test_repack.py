"""Repacking for `heron update`: surviving instances keep their task ids and containers,
new tasks get new ids in the least loaded containers, shrinking drops the highest
indexes, and impossible requests are clear errors."""

from __future__ import annotations

import pytest

from engine.packing import PackingError
from engine.packing.repack import moved_tasks, repack
from engine.spi.packing_plan import ContainerPlan, InstancePlan, PackingPlan
from engine.spi.resources import Resource

R = Resource(ram=1024 ** 3, cpu=1.0, disk=1024 ** 3)


def plan_of(layout: dict[int, list[tuple[str, int, int]]]) -> PackingPlan:
    return PackingPlan("p", [ContainerPlan(cid, [InstancePlan(c, t, i, R) for c, t, i in insts])
                             for cid, insts in layout.items()])


CURRENT = plan_of({1: [("count", 1, 0), ("spout", 3, 0)], 2: [("count", 2, 1)]})
COMPONENTS = {"count": 2, "spout": 1}


def placement(plan: PackingPlan) -> dict[int, tuple[int, str, int]]:
    return {i.task_id: (cid, i.component, i.component_index) for cid, i in plan.instances()}


def test_growing_keeps_everyone_in_place_and_adds_new_ids_to_the_least_loaded_container():
    new = repack(CURRENT, "t", COMPONENTS, {"count": 3}, {})
    where = placement(new)
    assert {t: where[t] for t in (1, 2, 3)} == placement(CURRENT)
    assert where[4] == (2, "count", 2)  # container 2 had fewer instances
    assert moved_tasks(CURRENT, new) == {"added": [4], "removed": [], "moved": []}


def test_shrinking_drops_the_highest_component_indexes_and_refills_an_emptied_container():
    new = repack(CURRENT, "t", COMPONENTS, {"count": 1}, {})
    assert moved_tasks(CURRENT, new) == {"added": [], "removed": [2], "moved": [3]}
    assert placement(new) == {1: (1, "count", 0), 3: (2, "spout", 0)}


def test_shrinking_below_the_container_count_drops_containers():
    one = plan_of({1: [("count", 1, 0)], 2: [("count", 2, 1)]})
    new = repack(one, "t", {"count": 2}, {"count": 1}, {})
    assert [c.id for c in new.containers] == [1]
    assert placement(new) == {1: (1, "count", 0)}


def test_fewer_containers_move_the_dropped_containers_instances():
    new = repack(CURRENT, "t", COMPONENTS, {}, {}, containers=1)
    assert [c.id for c in new.containers] == [1]
    assert sorted(placement(new)) == [1, 2, 3]
    assert moved_tasks(CURRENT, new)["moved"] == [2]


def test_more_containers_than_instances_is_refused():
    with pytest.raises(PackingError, match="a container would be empty"):
        repack(CURRENT, "t", COMPONENTS, {}, {}, containers=4)


@pytest.mark.parametrize("change, message", [({"nosuch": 2}, "no component 'nosuch'"),
                                             ({"count": 0}, "positive int")])
def test_bad_requests_name_the_problem(change, message):
    with pytest.raises(PackingError, match=message):
        repack(CURRENT, "t", COMPONENTS, change, {})
