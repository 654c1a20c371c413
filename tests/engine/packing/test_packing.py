"""Round-robin and first-fit-decreasing packing, and the packing plan message."""

from __future__ import annotations

import collections

import pytest

from engine.common.plan import ComponentDef, InputDef, LogicalPlan, StreamDef
from engine.packing import PackingError, PackingPlan, pack_first_fit_decreasing, pack_round_robin

MIB = 2 ** 20


def plan(spout_par=1, bolt_par=2, config=None):
    return LogicalPlan("wc", [
        ComponentDef("word_spout", "spout", spout_par,
                     outputs={"default": StreamDef("word_spout", "default", ("word",))},
                     python_class="spouts:WordSpout"),
        ComponentDef("count_bolt", "bolt", bolt_par,
                     outputs={"default": StreamDef("count_bolt", "default", ("word", "count"))},
                     inputs=(InputDef("word_spout", "default", "fields", ("word",)),),
                     python_class="bolts:WordCountBolt"),
    ], config or {})


def test_task_ids_follow_storm_numbering_by_component_name():
    packing = pack_round_robin(plan(), {})
    ids = {(i.component, i.component_index): i.task_id for _, i in packing.instances()}
    assert ids == {("count_bolt", 0): 1, ("count_bolt", 1): 2, ("word_spout", 0): 3}


def test_round_robin_deals_instances_over_the_storm_worker_count():
    packing = pack_round_robin(plan(spout_par=2, bolt_par=4), {"topology.workers": 3})
    sizes = sorted(len(c.instances) for c in packing.containers)
    assert [c.id for c in packing.containers] == [1, 2, 3]  # container 0 is the TManager's
    assert sizes == [2, 2, 2]


def test_round_robin_never_makes_more_containers_than_instances_and_sizes_them_alike():
    packing = pack_round_robin(plan(), {"topology.stmgrs": 10})
    assert len(packing.containers) == 3
    assert len({c.required for c in packing.containers}) == 1


def test_round_robin_heron_stmgrs_key_wins_over_storm_workers():
    assert len(pack_round_robin(plan(bolt_par=4), {"topology.stmgrs": 2,
                                                   "topology.workers": 4}).containers) == 2


def test_first_fit_decreasing_uses_as_few_containers_as_resources_allow():
    conf = {"topology.component.rammap": f"count_bolt:{600 * MIB},word_spout:{300 * MIB}",
            "topology.container.max.ram.hint": 1400 * MIB,
            "topology.container.padding.percentage": 0}
    packing = pack_first_fit_decreasing(plan(spout_par=2, bolt_par=2), conf)
    # 600+600 fit one container (1400), 300+300 the next
    per = [collections.Counter(i.component for i in c.instances) for c in packing.containers]
    assert per == [{"count_bolt": 2}, {"word_spout": 2}]


def test_an_instance_larger_than_any_container_is_a_clear_error():
    conf = {"topology.component.rammap": f"count_bolt:{8000 * MIB}"}
    with pytest.raises(PackingError, match="component 'count_bolt'.*more than a container"):
        pack_first_fit_decreasing(plan(), conf)


def test_resource_map_naming_an_unknown_component_is_an_error():
    with pytest.raises(PackingError, match="unknown component 'nope'"):
        pack_round_robin(plan(), {"topology.component.rammap": "nope:100"})


def test_packing_plan_round_trips_through_protobuf():
    packing = pack_round_robin(plan(bolt_par=3), {"topology.workers": 2})
    back = PackingPlan.from_proto(packing.to_proto())
    assert back == packing
    assert back.container_of() == packing.container_of()
