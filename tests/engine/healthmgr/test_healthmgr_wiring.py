"""The Health Manager's engine side without processes: its store in the state manager,
the topology view built from the stored plans, the run-time toggle ``heron update
--runtime-config`` writes, ``heron health``, the process's answer to a bad setting, and
``heron run`` refusing auto-scaling."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest

from engine.common.launch import StateManagerSpec, Submission
from engine.common.submission import load_topology
from engine.healthmgr import main as healthmgr_main
from engine.healthmgr.records import (
    Action,
    ActionKind,
    ActionStatus,
    DiagnosisKind,
    HealthEvent,
    Note,
)
from engine.healthmgr.runtime_config import RuntimeConfigError as UpdateError
from engine.healthmgr.runtime_config import parse_runtime_config, set_runtime_config
from engine.healthmgr.state import LoopState
from engine.healthmgr.store import HealthStore, read_records
from engine.healthmgr.view import build_view, topology_config
from engine.messages import physical_plan_pb2, topology_pb2
from engine.submitter.deploy import deploy

pytestmark = pytest.mark.timeout(60)

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "autoscale"
NAME = "e2e_autoscale"
OPTIONS = {"e2e.out": "/nonexistent", "e2e.rate_file": "/nonexistent"}


@pytest.fixture
def deployed(tmp_path, isolated_imports):
    """The autoscale project's topology stored as `heron submit` stores it (no process)."""
    spec = StateManagerSpec(kind="local", root=str(tmp_path / "state"))
    loaded = load_topology(PROJECT, name=NAME, cli_options=OPTIONS)
    state = spec.open()
    launch = deploy(loaded, state=state, state_spec=spec,
                    working_dir=tmp_path / "home" / "topologies" / NAME,
                    submission=Submission(project=str(PROJECT), name=NAME, options=OPTIONS))
    yield state, launch
    state.close()


def action(time: float, status: ActionStatus = ActionStatus.APPLIED) -> HealthEvent:
    return HealthEvent("dynamic-resource-allocation",
                       Action(ActionKind.SCALE, "slow", time, DiagnosisKind.UNDER_PROVISIONING,
                              "900 ms/s of backpressure at 1 instances", 1, 5, status=status))


def test_store_keeps_loop_state_and_bounded_records_per_submission(deployed):
    state, launch = deployed
    store = HealthStore(state, NAME, launch.topology_id, keep=3)
    assert store.loop_state() is None and read_records(state, NAME) == []
    loop_state = LoopState()
    loop_state.note_action(1000.0)
    store.save(loop_state, [action(1000.0)])
    store.save(loop_state, [HealthEvent("", Note(1001.0 + i, f"n{i}")) for i in range(3)])
    again = HealthStore(state, NAME, launch.topology_id)
    assert again.loop_state().last_action_time == 1000.0
    assert [r.get("message") for r in read_records(state, NAME)] == ["n0", "n1", "n2"]
    # a later submission of the same name does not inherit the wait
    assert HealthStore(state, NAME, "another-submission").loop_state() is None


def test_view_follows_the_plans_and_the_runtime_toggle(deployed):
    state, _ = deployed
    topology = state.get("topologies", NAME)
    packing = state.get("packingplans", NAME)
    pplan = physical_plan_pb2.PhysicalPlan()
    pplan.topology.CopyFrom(topology)
    pplan.topology.state = topology_pb2.RUNNING
    for container in packing.container_plans:
        for inst in container.instance_plans:
            pplan.instances.add(
                instance_id=f"container_{container.id}_{inst.component_name}_{inst.task_id}",
                stmgr_id=f"stmgr-{container.id}",
                info=physical_plan_pb2.InstanceInfo(task_id=inst.task_id,
                                                    component_name=inst.component_name))
    view = build_view(topology, packing, pplan)
    assert view.active and not view.updating
    assert [b.name for b in view.bolts()] == ["sink", "slow"]
    assert view.components["source"].spout and view.components["slow"].parallelism == 1
    (instance, container), = view.components["slow"].instances.items()
    assert container >= 1 and instance.startswith(f"container_{container}_slow_")
    # an update in flight: the packing plan has a task the physical plan does not run yet
    del pplan.instances[-1]
    assert build_view(topology, packing, pplan).updating
    pplan.topology.state = topology_pb2.PAUSED
    assert not build_view(topology, packing, pplan).active

    set_runtime_config(state, NAME, parse_runtime_config(
        ["dynamic-resource-allocation:mode=deactivated"]))
    stored = state.get("topologies", NAME)
    assert topology_config(stored)["dynamic-resource-allocation:runtime"] == "deactivated"
    set_runtime_config(state, NAME, {"dynamic-resource-allocation:runtime": "activated"})
    config = topology_config(state.get("topologies", NAME))
    assert config["dynamic-resource-allocation:runtime"] == "activated"
    assert sum(1 for kv in state.get("topologies", NAME).topology_config.kvs
               if kv.key == "dynamic-resource-allocation:runtime") == 1


@pytest.mark.parametrize("raw, message", [
    ("dynamic-resource-allocation:mode=off", "must be activated or deactivated"),
    ("dynamic-resource-allocation=activated", "expected POLICY:mode=activated"),
    ("dynamic-resource-allocation:interval=3", "expected POLICY:mode=activated"),
])
def test_runtime_config_errors_name_the_value(raw, message):
    with pytest.raises(UpdateError, match=message):
        parse_runtime_config([raw])


def test_runtime_config_must_name_a_policy_of_the_topology(deployed):
    state, _ = deployed
    with pytest.raises(UpdateError, match="no policy 'auto-restart-backpressure-container'"):
        set_runtime_config(state, NAME, {"auto-restart-backpressure-container:runtime":
                                         "activated"})


def test_a_bad_setting_stops_the_health_manager_with_one_line_naming_it(deployed, caplog):
    state, launch = deployed
    topology = state.get("topologies", NAME)
    topology.topology_config.kvs.add(key="dynamic-resource-allocation.health.policy.bogus",
                                     value="1", type=topology_pb2.JSON_VALUE)
    state.set("topologies", NAME, topology)
    with caplog.at_level(logging.ERROR, logger="heron.healthmgr"):
        code = healthmgr_main.run(launch, state, threading.Event())
    assert code == healthmgr_main.CONFIG_ERROR
    (line,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert "dynamic-resource-allocation.health.policy.bogus" in line


def test_heron_health_prints_the_records(deployed, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from engine.tools.cli.main import main

    state, launch = deployed
    HealthStore(state, NAME, launch.topology_id).save(LoopState(), [action(1000.0)])
    args = ["--state-root", str(tmp_path / "state")]
    monkeypatch.setenv("HERON_HOME", str(tmp_path / "home"))
    as_json = CliRunner().invoke(main, ["health", NAME, "--json", *args])
    assert as_json.exit_code == 0, as_json.output
    (record,) = json.loads(as_json.output)
    assert record["type"] == "action" and record["target"] == 5
    table = CliRunner().invoke(main, ["health", NAME, *args])
    assert table.exit_code == 0 and "scale 1 -> 5: applied" in table.output


def test_heron_run_refuses_auto_scaling(tmp_path, isolated_imports):
    from click.testing import CliRunner

    from engine.tools.cli.main import main

    result = CliRunner().invoke(
        main,
        [
            "run",
            str(PROJECT),
            "-n",
            NAME,
            "--time",
            "1",
            *[x for k, v in OPTIONS.items() for x in ("-o", f"{k}={v}")],
        ],
    )
    assert result.exit_code == 2
    assert "auto-scaling is for submitted topologies" in result.output


def test_the_actuator_refuses_clearly_without_a_scheduler_service(deployed):
    from engine.healthmgr.scheduler_actuator import ActuatorError, SchedulerActuator

    state, _ = deployed
    actuator = SchedulerActuator(state, NAME, security=None)
    with pytest.raises(ActuatorError, match="scheduler of 'e2e_autoscale' is not running"):
        actuator.scale("slow", 2)
    with pytest.raises(ActuatorError, match="scheduler of 'e2e_autoscale' is not running"):
        actuator.restart_container(1)
    # nothing was stored: the packing plan still has one "slow"
    packing = state.get("packingplans", NAME)
    assert sum(1 for c in packing.container_plans for i in c.instance_plans
               if i.component_name == "slow") == 1
