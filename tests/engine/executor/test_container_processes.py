"""The executor's process table for a two-container packing plan."""

from __future__ import annotations

import pytest

from engine.common.launch import LaunchSpec, StateManagerSpec, Submission
from engine.executor import container_processes, executor_process, resolve_modules, stop_stages

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def spec(tmp_path, monkeypatch) -> LaunchSpec:
    monkeypatch.delenv("HERON_MODULE_OVERRIDES", raising=False)
    return LaunchSpec(topology_name="wc", topology_id="wc-1", working_dir=str(tmp_path),
                      submission=Submission(project=".", name="wc"),
                      state=StateManagerSpec(root=str(tmp_path / "state")), python="/py")


def test_container_zero_runs_the_topology_master(spec, plan):
    (tm,) = container_processes(spec, 0, plan)
    assert tm.name == "heron-tmanager"
    assert tm.argv == ("/py", "-m", "engine.tmanager", "--launch", str(spec.path))
    assert tm.log_path == spec.log_dir / "heron-tmanager.log"


def test_containers_run_stmgr_metricsmgr_and_their_instances(spec, plan):
    one = container_processes(spec, 1, plan)
    assert [p.name for p in one] == ["stmgr-1", "metricsmgr-1", "container_1_word-spout_1",
                                     "container_1_count-bolt_3"]
    assert one[0].argv == ("/py", "-m", "engine.stmgr", "--launch", str(spec.path),
                           "--container", "1")
    assert one[1].argv[2] == "engine.metricsmgr"
    assert one[3].argv == ("/py", "-m", "engine.instance", "--launch", str(spec.path),
                           "--container", "1", "--task", "3")
    assert one[3].log_path == spec.log_dir / "container_1_count-bolt_3.log"
    two = container_processes(spec, 2, plan)
    assert [p.name for p in two][2:] == ["container_2_word-spout_2", "container_2_count-bolt_4"]
    assert stop_stages(2, plan) == [["container_2_word-spout_2", "container_2_count-bolt_4"],
                                    ["stmgr-2"], ["metricsmgr-2"]]
    with pytest.raises(ValueError, match="container 3 is not in packing plan"):
        container_processes(spec, 3, plan)


def test_modules_can_be_overridden(spec, plan, monkeypatch):
    monkeypatch.setenv("HERON_MODULE_OVERRIDES", "*=x.standin,instance=y.inst")
    mods = resolve_modules()
    assert mods["stmgr"] == "x.standin" and mods["instance"] == "y.inst"
    procs = container_processes(spec, 1, plan, modules={"stmgr": "z.st"})
    assert [p.argv[2] for p in procs] == ["z.st", "x.standin", "y.inst", "y.inst"]
    assert executor_process(spec, 2).argv[2:] == ("x.standin", "--launch", str(spec.path),
                                                  "--container", "2")


def test_container_zero_runs_the_health_manager_when_asked(spec, plan):
    tm, hm = container_processes(spec, 0, plan, healthmgr=True)
    assert (tm.name, hm.name) == ("heron-tmanager", "heron-healthmgr")
    assert hm.argv == ("/py", "-m", "engine.healthmgr", "--launch", str(spec.path))
    assert hm.log_path == spec.log_dir / "heron-healthmgr.log"
    # stopped before the Topology Master it polls; never in another container
    assert stop_stages(0, plan) == [["heron-healthmgr"], ["heron-tmanager"]]
    assert "heron-healthmgr" not in [p.name for p in container_processes(spec, 1, plan,
                                                                         healthmgr=True)]
