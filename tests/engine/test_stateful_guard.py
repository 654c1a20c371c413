"""Under EFFECTIVELY_ONCE, a parallelism change that would change a stateful component's
task ids is refused with one line naming it, before anything is stored or any scheduler
asked: by ``heron update`` and by the Health Manager alike (engine/submitter/
stateful_guard.py). Other modes, stateless components and container moves go ahead.
No engine process is started: the topologies are compiled and stored, and the scheduler
service is a stand-in that fails the test if it is ever asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from compat.storm_api import Bolt, Grouping, Spout, StatefulComponent, Topology
from engine.healthmgr.records import Action, Diagnosis, DiagnosisKind, Note
from engine.healthmgr.resolvers.scale_down import ScaleDownResolver
from engine.healthmgr.resolvers.scale_up import ScaleUpResolver
from engine.healthmgr.scheduler_actuator import ActuatorError, SchedulerActuator
from engine.healthmgr.view import build_view
from engine.launch import StateManagerSpec
from engine.messages import physical_plan_pb2, scheduler_pb2
from engine.packing.repack import repack
from engine.packing.round_robin import pack_round_robin
from engine.plan import compile_topology
from engine.plan.constants import STATEFUL_CONFIG_KEY
from engine.spi.packing_plan import PackingPlan
from engine.submitter.stateful_guard import (frozen_components, refusal,
                                             stateful_components)
from engine.submitter.update import UpdateError, component_parallelism, plan_update

pytestmark = pytest.mark.timeout(60)

NAME = "guarded"
EO = {"topology.reliability.mode": "EFFECTIVELY_ONCE", "topology.stmgrs": 2}


class Words(Spout):
    outputs = ["word"]

    def next_tuple(self):
        pass


class Counter(StatefulComponent, Bolt):
    outputs = ["word", "count"]

    def init_state(self, stateful_state):
        self.counts = stateful_state

    def process(self, tup):
        pass


class Splitter(Bolt):
    outputs = ["word"]

    def process(self, tup):
        pass


class Guarded(Topology):
    # ids are dealt by sorted name (a_split, count, words): a fresh numbering after
    # a_split grows would move count's ids up
    words = Words.spec(par=2)
    a_split = Splitter.spec(inputs=[words], par=2)
    count = Counter.spec(inputs={a_split: Grouping.fields("word")}, par=2)


def stored(config: dict) -> tuple[object, PackingPlan]:
    """The Topology message and packing plan `heron submit` would store."""
    plan = compile_topology(Guarded, name=NAME, config=config).plan
    return plan.to_proto(), pack_round_robin(plan)


def repacked(topology, current: PackingPlan, change: dict[str, int],
             containers: int | None = None) -> PackingPlan:
    return repack(current, NAME, component_parallelism(topology), change, dict(EO), containers)


# -- the rule ---------------------------------------------------------------------------------
def test_the_compiler_marks_stateful_components_only():
    topology, _ = stored(EO)
    assert stateful_components(topology) == {"count"}
    plan = compile_topology(Guarded, name=NAME, config=EO).plan
    assert plan.components["count"].config[STATEFUL_CONFIG_KEY] is True
    assert STATEFUL_CONFIG_KEY not in plan.components["a_split"].config


def test_changing_a_stateful_components_parallelism_is_refused_naming_it():
    topology, current = stored(EO)
    for n in (1, 3):
        message = refusal(topology, current, repacked(topology, current, {"count": n}),
                          {"count": n})
        assert message is not None and "'count'" in message and "\n" not in message
        assert "EFFECTIVELY_ONCE" in message


def test_stateless_components_and_container_moves_go_ahead():
    topology, current = stored(EO)
    for change, containers in (({"a_split": 4}, None), ({"words": 1}, None), ({}, 1), ({}, 3),
                               ({"count": 2}, None)):  # asking for what it has is no change
        proposed = repacked(topology, current, change, containers)
        assert refusal(topology, current, proposed, change) is None, (change, containers)


def test_a_packing_that_renumbers_a_stateful_component_is_refused():
    """repack keeps task ids; a fresh packing (ids dealt by sorted name) would give
    "count" new ids when "a_split" grows: its stored state would go to the wrong tasks."""
    topology, current = stored(EO)
    fresh = pack_round_robin(_grown())
    message = refusal(topology, current, fresh, {"a_split": 3})
    assert message is not None and "renumber the tasks of 'count'" in message
    assert "[3, 4] -> [4, 5]" in message


def _grown():
    class Grown(Topology):  # Guarded with a_split at 3
        words = Words.spec(par=2)
        a_split = Splitter.spec(inputs=[words], par=3)
        count = Counter.spec(inputs={a_split: Grouping.fields("word")}, par=2)
    return compile_topology(Grown, name=NAME, config=EO).plan


@pytest.mark.parametrize("mode", [None, "ATLEAST_ONCE", "ATMOST_ONCE"])
def test_other_reliability_modes_are_never_refused(mode):
    config = {} if mode is None else {"topology.reliability.mode": mode}
    topology, current = stored(config)
    assert frozen_components(topology) == set()
    assert refusal(topology, current, repacked(topology, current, {"count": 3}),
                   {"count": 3}) is None


# -- heron update -----------------------------------------------------------------------------
class NeverAsked:
    """Where the scheduler service would be: a refused change must not reach it."""

    def __init__(self, state, tmp_path: Path) -> None:
        state.create("schedulers", NAME, scheduler_pb2.SchedulerLocation(
            topology_name=NAME, http_endpoint=f"ipc://{tmp_path}/nobody.sock"),
            ephemeral=True)


@pytest.fixture
def deployed(tmp_path):
    """An effectively-once topology as `heron submit` stores it; no process runs."""
    spec = StateManagerSpec(kind="local", root=str(tmp_path / "state"))
    state = spec.open()
    topology, packing = stored(EO)
    state.create("topologies", NAME, topology)
    state.create("packingplans", NAME, packing.to_proto())
    NeverAsked(state, tmp_path)
    yield state
    state.close()


def snapshot(state) -> tuple[bytes, bytes]:
    return (state.get("topologies", NAME).SerializeToString(deterministic=True),
            state.get("packingplans", NAME).SerializeToString(deterministic=True))


def test_heron_update_refuses_with_one_line_naming_the_component(deployed, tmp_path,
                                                                 monkeypatch):
    from engine.cli.main import main

    before = snapshot(deployed)
    monkeypatch.setenv("HERON_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(main, ["update", NAME, "--component-parallelism", "count:3",
                                       "--state-root", str(tmp_path / "state")])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "cannot update 'guarded': 'count' is a stateful component" in lines[0]
    assert "Traceback" not in result.output
    assert snapshot(deployed) == before


def test_plan_update_allows_a_stateless_change(deployed):
    plan = plan_update(deployed, NAME, {"a_split": 3})
    assert plan.after["a_split"] == 3
    with pytest.raises(UpdateError, match="'count' is a stateful component"):
        plan_update(deployed, NAME, {"a_split": 3, "count": 1})


# -- the Health Manager -------------------------------------------------------------------------
def running(packing: PackingPlan) -> physical_plan_pb2.PhysicalPlan:
    """A physical plan that runs exactly the packing plan's tasks."""
    pplan = physical_plan_pb2.PhysicalPlan()
    for cid, inst in packing.instances():
        added = pplan.instances.add()
        added.instance_id = f"container_{cid}_{inst.component}_{inst.task_id}"
        added.stmgr_id = f"stmgr-{cid}"
        added.info.task_id = inst.task_id
        added.info.component_index = inst.component_index
        added.info.component_name = inst.component
    return pplan


@pytest.mark.parametrize("mode", ["EFFECTIVELY_ONCE", "ATLEAST_ONCE"])
def test_the_health_managers_resolvers_note_the_refusal_and_propose_nothing(mode):
    topology, packing = stored({**EO, "topology.reliability.mode": mode})
    view = build_view(topology, packing.to_proto(), running(packing))
    up = ScaleUpResolver(16).resolve(
        Diagnosis(DiagnosisKind.UNDER_PROVISIONING, "count", 10.0, detail={"ms_per_s": 900.0}),
        view.components["count"])
    down = ScaleDownResolver(allow_key_moves=True).resolve(
        Diagnosis(DiagnosisKind.OVER_PROVISIONING, "count", 10.0,
                  detail={"peak_rate": 1.0, "capacity_per_instance": 100.0}),
        view.components["count"])
    if mode == "ATLEAST_ONCE":
        assert isinstance(up, Action) and isinstance(down, Action)
        return
    for outcome in (up, down):
        assert isinstance(outcome, Note) and outcome.component == "count"
        assert "'count' is a stateful component of an EFFECTIVELY_ONCE topology" \
            in outcome.message
    assert view.components["a_split"].scaling_refused == ""


def test_the_health_managers_actuator_refuses_before_asking_the_scheduler(deployed):
    """A policy that scales without these resolvers still cannot get past the rule: the
    actuator refuses before any request (no scheduler listens: a request would time out)."""
    before = snapshot(deployed)
    with pytest.raises(ActuatorError, match="cannot scale 'count' to 3: 'count' is a "
                                            "stateful component"):
        SchedulerActuator(deployed, NAME, security=None, timeout=0.2).scale("count", 3)
    assert snapshot(deployed) == before
