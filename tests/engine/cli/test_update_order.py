"""A packing plan changes only once the scheduler accepted it, for ``heron update`` and
the Health Manager's scaling alike: a refused (or unanswered) update leaves the stored
parallelism and plan as they were, and an accepted one finds the old plan still stored
when the scheduler is asked. The scheduler service is a stand-in on an ipc socket that
records what the store held when each request arrived; no engine process is started."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import zmq
from click.testing import CliRunner

from engine.common.launch import StateManagerSpec, Submission
from engine.common.network import decode, encode
from engine.common.submission import load_topology
from engine.healthmgr.scheduler_actuator import ActuatorError, SchedulerActuator
from engine.messages import common_pb2, scheduler_pb2
from engine.submitter.deploy import deploy
from engine.tools.cli.main import main

pytestmark = pytest.mark.timeout(60)

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "autoscale"
NAME = "e2e_autoscale"
OPTIONS = {"e2e.out": "/nonexistent", "e2e.rate_file": "/nonexistent"}


def slow_parallelism(state) -> int:
    """How many "slow" instances the stored packing plan has."""
    packing = state.get("packingplans", NAME)
    return sum(1 for c in packing.container_plans for i in c.instance_plans
               if i.component_name == "slow")


class StandInScheduler:
    """A scheduler service that answers every UpdateTopologyRequest with ``status`` (or
    not at all) and notes the stored "slow" parallelism at the moment each arrived."""

    def __init__(self, state, endpoint: str, status: int | None) -> None:
        self.state = state
        self.status = status
        self.seen_when_asked: list[int] = []
        self.proposed: list[int] = []
        self._ctx = zmq.Context()
        self._sock = self._ctx.socket(zmq.ROUTER)
        self._sock.bind(endpoint)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            if not self._sock.poll(50):
                continue
            frames = self._sock.recv_multipart()
            message = decode(frames[1:])
            self.seen_when_asked.append(slow_parallelism(self.state))
            self.proposed.append(sum(1 for c in message.proposed_packing_plan.container_plans
                                     for i in c.instance_plans if i.component_name == "slow"))
            if self.status is None:
                continue
            reply = scheduler_pb2.SchedulerResponse(status=common_pb2.Status(
                status=self.status, message="sbatch: error: Requested node configuration "
                "is not available" if self.status != common_pb2.OK else "started 1"))
            self._sock.send_multipart([frames[0], *encode(reply)])

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close(linger=0)
        self._ctx.term()


@pytest.fixture
def deployed(tmp_path, isolated_imports):
    """The autoscale project's topology stored as `heron submit` stores it (no process),
    with ``schedulers/NAME`` pointing at a stand-in the test starts with ``serve``."""
    spec = StateManagerSpec(kind="local", root=str(tmp_path / "state"))
    loaded = load_topology(PROJECT, name=NAME, cli_options=OPTIONS)
    state = spec.open()
    deploy(loaded, state=state, state_spec=spec,
           working_dir=tmp_path / "home" / "topologies" / NAME,
           submission=Submission(project=str(PROJECT), name=NAME, options=OPTIONS))
    endpoint = f"ipc://{tmp_path}/scheduler.sock"
    state.create("schedulers", NAME, scheduler_pb2.SchedulerLocation(
        topology_name=NAME, http_endpoint=endpoint), ephemeral=True)
    started: list[StandInScheduler] = []

    def serve(status: int | None) -> StandInScheduler:
        started.append(StandInScheduler(state, endpoint, status))
        return started[-1]

    yield state, serve
    for stand_in in started:
        stand_in.close()
    state.close()


def heron_update(tmp_path: Path, monkeypatch, *args: str):
    monkeypatch.setenv("HERON_HOME", str(tmp_path / "home"))
    return CliRunner().invoke(main, ["update", NAME, *args,
                                     "--state-root", str(tmp_path / "state")])


def test_a_scale_the_scheduler_refuses_leaves_the_stored_plan_unchanged(deployed):
    state, serve = deployed
    scheduler = serve(common_pb2.NOTOK)
    topology_before = state.get("topologies", NAME).SerializeToString(deterministic=True)
    with pytest.raises(ActuatorError, match="refused the update of 'slow' to parallelism 3: "
                                            "sbatch: error: Requested node configuration"):
        SchedulerActuator(state, NAME, security=None).scale("slow", 3)
    assert scheduler.proposed == [3]
    assert slow_parallelism(state) == 1
    assert state.get("topologies", NAME).SerializeToString(deterministic=True) \
        == topology_before


def test_a_scale_the_scheduler_does_not_answer_leaves_the_stored_plan_unchanged(deployed):
    state, serve = deployed
    serve(None)
    with pytest.raises(ActuatorError, match="did not answer"):
        SchedulerActuator(state, NAME, security=None, timeout=0.5).scale("slow", 2)
    assert slow_parallelism(state) == 1


def test_an_accepted_scale_is_stored_only_after_the_scheduler_was_asked(deployed):
    state, serve = deployed
    scheduler = serve(common_pb2.OK)
    SchedulerActuator(state, NAME, security=None).scale("slow", 3)
    assert scheduler.seen_when_asked == [1]   # the old plan was still stored when asked
    assert slow_parallelism(state) == 3


def test_heron_update_refused_changes_nothing_and_says_why(deployed, tmp_path, monkeypatch):
    state, serve = deployed
    scheduler = serve(common_pb2.NOTOK)
    result = heron_update(tmp_path, monkeypatch, "--component-parallelism", "slow:4")
    assert result.exit_code != 0
    assert "refused the update: sbatch: error: Requested node configuration is not " \
           "available; the stored packing plan is unchanged" in result.output
    assert "Traceback" not in result.output
    assert scheduler.proposed == [4]
    assert slow_parallelism(state) == 1


def test_heron_update_accepted_stores_the_plan_after_the_scheduler_answered(
        deployed, tmp_path, monkeypatch):
    state, serve = deployed
    scheduler = serve(common_pb2.OK)
    result = heron_update(tmp_path, monkeypatch, "--component-parallelism", "slow:2")
    assert result.exit_code == 0, result.output
    assert "updated 'e2e_autoscale': started 1" in result.output
    assert scheduler.seen_when_asked == [1]
    assert slow_parallelism(state) == 2
