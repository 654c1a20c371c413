"""``heron kill NAME --savepoint``: what happens before anything is killed.

A topology that takes no checkpoints is refused before it is deactivated or drained (exit
2, one line naming it and its mode). When the savepoint fails, nothing is killed, and a
topology the kill deactivated is activated again, as Flink's stop-with-savepoint leaves a
job running. No engine process runs: the topology is stored in the state manager, and the
Topology Master and the scheduler are stand-ins recording what they are asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.messages import common_pb2, physical_plan_pb2, tmanager_pb2, topology_pb2
from engine.statemgr.local_fs import LocalFileSystemStateManager
from engine.submitter.runtime import RuntimeManager
from engine.tools.cli import kill_command
from engine.tools.cli.env import CommandError
from tests.engine.cli.conftest import heron

pytestmark = pytest.mark.timeout(60)

NAME = "wc"


def store_topology(home: Path, config: dict, state: int | None = None) -> None:
    """``NAME`` as a submission stores it, with ``config``; with ``state``, the physical
    plan its Topology Master stored (RUNNING or PAUSED)."""
    topology = topology_pb2.Topology(id=f"{NAME}-1", name=NAME)
    for key, value in config.items():
        topology.topology_config.kvs.add(key=key, value=json.dumps(value))
    store = LocalFileSystemStateManager(home / "state")
    try:
        store.create("topologies", NAME, topology)
        if state is not None:
            pplan = physical_plan_pb2.PhysicalPlan()
            pplan.topology.CopyFrom(topology)
            pplan.topology.state = state
            store.create("pplans", NAME, pplan)
    finally:
        store.close()


@pytest.fixture
def calls(monkeypatch) -> list[str]:
    """What the kill asked of the Topology Master and the scheduler, in order."""
    seen: list[str] = []
    monkeypatch.setattr(RuntimeManager, "deactivate_and_drain",
                        lambda self, topology, wait: seen.append("deactivate"))
    monkeypatch.setattr(RuntimeManager, "kill",
                        lambda self, topology, timeout: seen.append("kill") or "scheduler")
    monkeypatch.setattr(kill_command, "topology_security", lambda *args: None)
    return seen


@pytest.mark.parametrize("config, mode", [
    ({"topology.reliability.mode": "ATLEAST_ONCE"}, "ATLEAST_ONCE"),
    ({"topology.reliability.mode": "atmost_once"}, "ATMOST_ONCE"),
    ({}, "ATLEAST_ONCE"),  # Storm's acking, one acker
    ({"topology.acker.executors": 0}, "ATMOST_ONCE"),
])
def test_kill_with_a_savepoint_of_a_topology_taking_no_checkpoints_is_refused_before_anything(
        heron_home, calls, config, mode):
    store_topology(heron_home, config, topology_pb2.RUNNING)
    result = heron("kill", NAME, "--savepoint")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"heron: error: cannot take a savepoint of {NAME!r}: it runs "
                               f"{mode}, and only EFFECTIVELY_ONCE topologies")
    assert calls == []  # neither deactivated, drained nor killed


def test_kill_without_a_savepoint_of_a_topology_taking_no_checkpoints_still_kills(
        heron_home, calls, monkeypatch):
    monkeypatch.setattr("engine.submitter.cleanup.clean_cluster", lambda *args, **kwargs: [])
    store_topology(heron_home, {"topology.reliability.mode": "ATLEAST_ONCE"},
                   topology_pb2.RUNNING)
    result = heron("kill", NAME, "--wait", "0")
    assert result.exit_code == 0, result.output
    assert calls == ["deactivate", "kill"]


@pytest.fixture
def failing_savepoint(monkeypatch) -> list:
    """The Topology Master's side: the savepoint fails; activation requests recorded."""
    activations: list = []

    def take_savepoint(env, name, savepoint_id, final=False):
        assert final
        raise CommandError(f"cannot take a savepoint of {name!r}: its checkpoint ckpt-7 was "
                           f"abandoned: 1 task(s) had not stored their state after 30 s")

    def ask_topology_master(env, name, build, failing, timeout=None):
        stored = topology_pb2.Topology(id=f"{NAME}-1", name=NAME)
        request = build(stored, tmanager_pb2.TManagerLocation(topology_id=f"{NAME}-1"))
        activations.append(request)
        answer = tmanager_pb2.TopologyControlResponse()
        answer.status.status = common_pb2.OK
        return answer

    monkeypatch.setattr(kill_command, "take_savepoint", take_savepoint)
    # (raising=False: a kill that never activates anything need not have it)
    monkeypatch.setattr(kill_command, "ask_topology_master", ask_topology_master,
                        raising=False)
    return activations


def test_a_failed_savepoint_kills_nothing_and_activates_the_topology_the_kill_deactivated(
        heron_home, calls, failing_savepoint):
    store_topology(heron_home, {"topology.reliability.mode": "EFFECTIVELY_ONCE"},
                   topology_pb2.RUNNING)
    result = heron("kill", NAME, "--savepoint")
    assert result.exit_code == 1
    assert calls == ["deactivate"]  # never killed
    assert [type(r).__name__ for r in failing_savepoint] == ["TopologyActivateRequest"]
    assert failing_savepoint[0].topology_name == NAME
    line = result.output.strip()
    assert len(line.splitlines()) == 1
    assert "was abandoned" in line
    assert f"{NAME!r} was not killed: it is activated again and takes checkpoints" in line


def test_a_failed_savepoint_leaves_a_topology_deactivated_before_the_kill_deactivated(
        heron_home, calls, failing_savepoint):
    store_topology(heron_home, {"topology.reliability.mode": "EFFECTIVELY_ONCE"},
                   topology_pb2.PAUSED)
    result = heron("kill", NAME, "--savepoint")
    assert result.exit_code == 1
    assert calls == ["deactivate"]
    assert failing_savepoint == []  # it was deactivated by its user: it stays so
    assert f"{NAME!r} was not killed; it stays deactivated, as it was before" in result.output


def test_a_failed_savepoint_says_so_when_the_topology_cannot_be_activated_again(
        heron_home, calls, failing_savepoint, monkeypatch):
    def no_answer(env, name, build, failing, timeout=None):
        raise CommandError(f"{failing}: its Topology Master did not answer")

    monkeypatch.setattr(kill_command, "ask_topology_master", no_answer, raising=False)
    store_topology(heron_home, {"topology.reliability.mode": "EFFECTIVELY_ONCE"},
                   topology_pb2.RUNNING)
    result = heron("kill", NAME, "--savepoint")
    assert result.exit_code == 1 and calls == ["deactivate"]
    assert (f"{NAME!r} was not killed, but is left deactivated: activating it again failed"
            in result.output)
    assert f"`heron activate {NAME}` runs it on" in result.output


def test_a_kill_failing_after_its_savepoint_was_written_says_where_the_topology_is(
        heron_home, calls, monkeypatch):
    from engine.submitter.errors import SubmitterError

    def refuse(self, topology, timeout):
        calls.append("kill")
        raise SubmitterError(f"the scheduler refused to kill {NAME!r}: busy")

    monkeypatch.setattr(kill_command, "take_savepoint",
                        lambda env, name, savepoint_id, final=False: "/sp/wc-1")
    monkeypatch.setattr(RuntimeManager, "kill", refuse)
    store_topology(heron_home, {"topology.reliability.mode": "EFFECTIVELY_ONCE"},
                   topology_pb2.RUNNING)
    result = heron("kill", NAME, "--savepoint")
    assert result.exit_code == 1 and calls == ["deactivate", "kill"]
    assert "savepoint of 'wc' written: /sp/wc-1" in result.output
    assert (f"the savepoint /sp/wc-1 was written, and {NAME!r} is left deactivated, taking "
            f"no checkpoints: `heron kill {NAME}` again, or `heron activate {NAME}`"
            in result.output)
