"""Under EFFECTIVELY_ONCE a stateful component's keyed state moves with its keys, so its
parallelism may change, except when its per-task state cannot be shared out (the newest
checkpoint records per-task state that is neither empty nor lists, and the class defines
no ``rescale_state``) or it would have more tasks than key groups: then the change is
refused with one line naming it, before anything is stored or any scheduler asked, by
``heron update`` and by the Health Manager alike (engine/submitter/stateful_guard.py).
No engine process is started: the topologies are compiled and stored, and the scheduler
service is a stand-in that fails the test if it is ever asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from compat.storm_api import Bolt, Grouping, Spout, StatefulComponent, Topology
from engine.common.launch import StateManagerSpec
from engine.common.plan import compile_topology
from engine.common.plan.constants import RESCALE_CONFIG_KEY, STATEFUL_CONFIG_KEY
from engine.healthmgr.records import Action, Diagnosis, DiagnosisKind, Note
from engine.healthmgr.resolvers.scale_down import ScaleDownResolver
from engine.healthmgr.resolvers.scale_up import ScaleUpResolver
from engine.healthmgr.scheduler_actuator import ActuatorError, SchedulerActuator
from engine.healthmgr.view import build_view
from engine.messages import ckptmgr_pb2, physical_plan_pb2, scheduler_pb2
from engine.packing.repack import repack
from engine.packing.round_robin import pack_round_robin
from engine.spi.packing_plan import PackingPlan
from engine.submitter.stateful_guard import frozen_components, refusal, stateful_components
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


def checkpoints(shape: str, component: str = "count") -> ckptmgr_pb2.StatefulConsistentCheckpoints:
    """The stored list of consistent checkpoints, the newest recording ``shape``."""
    newest = ckptmgr_pb2.StatefulConsistentCheckpoint(checkpoint_id="ckpt-9")
    newest.components.add(component=component, tasks=2, task_state=shape)
    return ckptmgr_pb2.StatefulConsistentCheckpoints(consistent_checkpoints=[newest])


class Rescaling(Counter):
    @staticmethod
    def rescale_state(states, new_parallelism):
        return [{} for _ in range(new_parallelism)]


# -- the rule ---------------------------------------------------------------------------------
def test_the_compiler_marks_stateful_components_and_their_rescale_hook():
    topology, _ = stored(EO)
    assert stateful_components(topology) == {"count"}
    plan = compile_topology(Guarded, name=NAME, config=EO).plan
    assert plan.components["count"].config[STATEFUL_CONFIG_KEY] is True
    assert RESCALE_CONFIG_KEY not in plan.components["count"].config
    assert STATEFUL_CONFIG_KEY not in plan.components["a_split"].config

    class Hooked(Topology):
        words = Words.spec()
        count = Rescaling.spec(inputs={words: Grouping.fields("word")})
    hooked = compile_topology(Hooked, name=NAME, config=EO).plan
    assert hooked.components["count"].config[RESCALE_CONFIG_KEY] is True


@pytest.mark.parametrize("shape", [None, "empty", "lists"])
def test_a_stateful_component_whose_per_task_state_can_be_shared_out_may_be_resized(shape):
    topology, current = stored(EO)
    stored_checkpoints = None if shape is None else checkpoints(shape)
    for n in (1, 3, 5):
        proposed = repacked(topology, current, {"count": n})
        assert refusal(topology, current, proposed, {"count": n}, stored_checkpoints) is None


def test_per_task_state_that_cannot_be_shared_out_refuses_the_change_naming_the_component():
    topology, current = stored(EO)
    for n in (1, 3):
        message = refusal(topology, current, repacked(topology, current, {"count": n}),
                          {"count": n}, checkpoints("other"))
        assert message is not None and message.startswith("'count' keeps per-task state")
        assert "ckpt-9" in message and "rescale_state" in message and "\n" not in message
    assert frozen_components(topology, checkpoints("other")).keys() == {"count"}


def test_a_rescale_state_hook_lets_any_per_task_state_be_shared_out():
    class Hooked(Topology):
        words = Words.spec(par=2)
        count = Rescaling.spec(inputs={words: Grouping.fields("word")}, par=2)
    plan = compile_topology(Hooked, name=NAME, config=EO).plan
    topology, current = plan.to_proto(), pack_round_robin(plan)
    proposed = repack(current, NAME, component_parallelism(topology), {"count": 4}, dict(EO))
    assert refusal(topology, current, proposed, {"count": 4}, checkpoints("other")) is None


def test_more_tasks_than_key_groups_is_refused_naming_the_key():
    config = {**EO, "topology.stateful.key.groups": 4}
    topology, current = stored(config)
    proposed = repack(current, NAME, component_parallelism(topology), {"count": 5}, config)
    message = refusal(topology, current, proposed, {"count": 5})
    assert message is not None and "'count' cannot have 5 tasks" in message
    assert "topology.stateful.key.groups" in message
    proposed = repack(current, NAME, component_parallelism(topology), {"count": 4}, config)
    assert refusal(topology, current, proposed, {"count": 4}) is None


def test_stateless_components_and_container_moves_go_ahead():
    topology, current = stored(EO)
    for change, containers in (({"a_split": 4}, None), ({"words": 1}, None), ({}, 1), ({}, 3),
                               ({"count": 2}, None)):  # asking for what it has is no change
        proposed = repacked(topology, current, change, containers)
        assert refusal(topology, current, proposed, change, checkpoints("other")) is None, \
            (change, containers)


def test_a_packing_that_only_renumbers_a_stateful_component_goes_ahead():
    """repack keeps task ids; a fresh packing (ids dealt by sorted name) gives "count" new
    ids when "a_split" grows: the same number of tasks, so per-task state is restored by
    position, whatever its shape."""
    topology, current = stored(EO)
    fresh = pack_round_robin(_grown())
    assert refusal(topology, current, fresh, {"a_split": 3}, checkpoints("other")) is None


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
    assert frozen_components(topology, checkpoints("other")) == {}
    assert refusal(topology, current, repacked(topology, current, {"count": 3}),
                   {"count": 3}, checkpoints("other")) is None


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
    state.create("statefulcheckpoints", NAME, checkpoints("other"))
    NeverAsked(state, tmp_path)
    yield state
    state.close()


def snapshot(state) -> tuple[bytes, bytes]:
    return (state.get("topologies", NAME).SerializeToString(deterministic=True),
            state.get("packingplans", NAME).SerializeToString(deterministic=True))


def test_heron_update_refuses_with_one_line_naming_the_component(deployed, tmp_path,
                                                                 monkeypatch):
    from engine.tools.cli.main import main

    before = snapshot(deployed)
    monkeypatch.setenv("HERON_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(main, ["update", NAME, "--component-parallelism", "count:3",
                                       "--state-root", str(tmp_path / "state")])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "cannot update 'guarded': 'count' keeps per-task state" in lines[0]
    assert "Traceback" not in result.output
    assert snapshot(deployed) == before


def test_plan_update_allows_a_stateless_change(deployed):
    plan = plan_update(deployed, NAME, {"a_split": 3})
    assert plan.after["a_split"] == 3
    with pytest.raises(UpdateError, match="'count' keeps per-task state"):
        plan_update(deployed, NAME, {"a_split": 3, "count": 1})
    deployed.set("statefulcheckpoints", NAME, checkpoints("lists"))
    assert plan_update(deployed, NAME, {"count": 5}).after["count"] == 5


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


@pytest.mark.parametrize("mode, shape", [("EFFECTIVELY_ONCE", "other"),
                                         ("EFFECTIVELY_ONCE", "lists"),
                                         ("ATLEAST_ONCE", "other")])
def test_the_health_managers_resolvers_note_a_refusal_and_scale_what_can_move(mode, shape):
    topology, packing = stored({**EO, "topology.reliability.mode": mode})
    view = build_view(topology, packing.to_proto(), running(packing), checkpoints(shape))
    up = ScaleUpResolver(16).resolve(
        Diagnosis(DiagnosisKind.UNDER_PROVISIONING, "count", 10.0, detail={"ms_per_s": 900.0}),
        view.components["count"])
    down = ScaleDownResolver(allow_key_moves=True).resolve(
        Diagnosis(DiagnosisKind.OVER_PROVISIONING, "count", 10.0,
                  detail={"peak_rate": 1.0, "capacity_per_instance": 100.0}),
        view.components["count"])
    if mode == "ATLEAST_ONCE" or shape == "lists":
        assert isinstance(up, Action) and isinstance(down, Action)
        # keyed state moves with its keys: the fields grouping is no reason to hold back
        assert view.components["count"].fields_grouped is (mode == "ATLEAST_ONCE")
        return
    for outcome in (up, down):
        assert isinstance(outcome, Note) and outcome.component == "count"
        assert "'count' keeps per-task state" in outcome.message
    assert view.components["a_split"].scaling_refused == ""


def test_the_health_managers_actuator_refuses_before_asking_the_scheduler(deployed):
    """A policy that scales without these resolvers still cannot get past the rule: the
    actuator refuses before any request (no scheduler listens: a request would time out)."""
    before = snapshot(deployed)
    with pytest.raises(ActuatorError, match="cannot scale 'count' to 3: 'count' keeps "
                                            "per-task state"):
        SchedulerActuator(deployed, NAME, security=None, timeout=0.2).scale("count", 3)
    assert snapshot(deployed) == before
