"""``/topologies/checkpoints``: an EFFECTIVELY_ONCE topology's checkpoints and restores
(issue 29), against the stateful word count submitted to a local state tree with no
process started: the consistent checkpoints come from a stored ``statefulcheckpoints``
node, the live figures from a stand-in Topology Master the test controls (secured like
the real one). A real topology's figures on the page are checked in
test_ui_checkpoints_browser.py.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import zmq

from engine.common.launch import StateManagerSpec, Submission
from engine.common.network import bind_router, decode, encode
from engine.common.security.guard import ConnectionGuard
from engine.messages import ckptmgr_pb2, common_pb2, tmanager_pb2
from tests.engine.tracker.conftest import NAME as TRACKED
from tests.engine.tracker.conftest import PROJECT as TRACKED_PROJECT
from tests.engine.tracker.conftest import client, tracker_app

pytestmark = pytest.mark.timeout(60)

STATEFUL_PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "stateful"
NAME = "stateful_wordcount"

#: what the stand-in Topology Master reports: (component, instance) -> {metric: value}
RESTORE_LOG = [["the topology started", ""],
               ["task 1 (count) failed: RuntimeError: injected failure", "ckpt-0000000000002"],
               ["stmgr-2 restarted", "ckpt-0000000000003"]]
FIGURES: dict[tuple[str, str], dict[str, str]] = {
    ("__tmanager__", "heron-tmanager"): {
        "__checkpoints-completed": "7", "__checkpoints-abandoned": "2",
        "__checkpoint-last-id": "ckpt-0000000000007", "__checkpoint-last-duration-ms": "41",
        "__checkpoint-last-bytes": "5120", "__restores": "3",
        "__restore-last-reason": "stmgr-2 restarted",
        "__restore-last-checkpoint": "ckpt-0000000000003", "__restore-last-ms": "230",
        "__restore-log": json.dumps(RESTORE_LOG), "__connections-refused": "0",
        "__rescale-last": json.dumps({"count": [2, 5, 77]})},
    ("count", "container_1_count_1"): {
        "__checkpoint-saves": "7", "__checkpoint-bytes": "2048", "__checkpoint-save-ms": "1.25",
        "__restores": "3", "__restore-ms": "4.5", "__execute-count": "900",
        "__keyed-keys": "1200", "__key-groups-owned": "26", "__checkpoint-keys-written": "40"},
    ("split", "container_2_split_6"): {
        "__checkpoint-saves": "7", "__checkpoint-bytes": "0", "__checkpoint-save-ms": "0.01",
        "__restores": "3", "__restore-ms": "0.2", "__report-age": "12.5"},
    ("__stmgr__", "stmgr-1"): {
        "__checkpoint-markers-sent": "14", "__checkpoint-alignments-abandoned": "1",
        "__checkpoint-held-bytes": "300", "__rollback-discarded-messages": "25"},
}


class StandInTopologyMaster:
    """Answers every MetricRequest with ``figures`` (replaceable by the test). One thread
    owns the socket."""

    def __init__(self, launch: Any, figures: dict[tuple[str, str], dict[str, str]]) -> None:
        self.figures = figures
        self.ctx = zmq.Context()
        self.guard = ConnectionGuard.for_launch(self.ctx, launch, process="standin-tm")
        self.sock, self.endpoint = bind_router(self.ctx, "tcp://127.0.0.1:0", mandatory=False,
                                               guard=self.guard, kind="controller")
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="standin-tm", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            if not self.sock.poll(50):
                continue
            frames = self.sock.recv_multipart()
            message = decode(frames[1:])
            if isinstance(message, tmanager_pb2.MetricRequest):
                response = tmanager_pb2.MetricResponse(
                    status=common_pb2.Status(status=common_pb2.OK))
                for (component, instance), values in self.figures.items():
                    task = response.metric.add(instance_id=instance)
                    for name, value in values.items():
                        task.metric.add(name=f"{component}/{name}", value=value)
            else:
                response = tmanager_pb2.ExceptionLogResponse(
                    status=common_pb2.Status(status=common_pb2.OK))
            self.sock.send_multipart([frames[0], *encode(response)])

    def close(self) -> None:
        self._stop.set()
        self.thread.join(5)
        self.sock.close(linger=0)
        self.guard.stop()
        self.ctx.term()


@pytest.fixture(scope="module")
def submitted(tmp_path_factory):
    """The stateful word count and the (at-least-once) tracker test topology, written to
    one local state tree as `heron submit` writes them, and three consistent checkpoints
    stored as the Topology Master stores them (newest first)."""
    from engine.common.submission import load_topology
    from engine.submitter.deploy import deploy

    saved_path, saved_modules = list(sys.path), set(sys.modules)
    root = tmp_path_factory.mktemp("tracker-ckpt")
    spec = StateManagerSpec(kind="local", root=str(root / "state"))
    launches = {}
    with spec.open() as state:
        for project, name in ((STATEFUL_PROJECT, NAME), (TRACKED_PROJECT, TRACKED)):
            launches[name] = deploy(load_topology(project, name=name), state=state,
                                    state_spec=spec,
                                    working_dir=root / "home" / "topologies" / name,
                                    submission=Submission(project=str(project), name=name))
        packing = state.get("packingplans", NAME)
        state.create("statefulcheckpoints", NAME, ckptmgr_pb2.StatefulConsistentCheckpoints(
            consistent_checkpoints=[
                ckptmgr_pb2.StatefulConsistentCheckpoint(
                    checkpoint_id=f"ckpt-000000000000{n}", packing_plan_id=packing.id,
                    completed_at_ms=1_700_000_000_000 + n * 1000, duration_secs=0.04,
                    bytes=5000 + n)
                for n in (7, 6, 5)]))
    yield spec, launches, root
    sys.path[:] = saved_path
    for name in set(sys.modules) - saved_modules:
        del sys.modules[name]


@pytest.fixture
def api(submitted, serve):
    spec, _, root = submitted
    served = serve(tracker_app(spec, home=root / "home"))
    with client(served.url) as http:
        yield http


@pytest.fixture
def standin_tm(submitted):
    """A stand-in Topology Master of the stateful word count, published at tmanagers/."""
    spec, launches, _ = submitted
    launch = launches[NAME]
    tm = StandInTopologyMaster(launch, dict(FIGURES))
    state = spec.open()
    state.create("tmanagers", NAME, tmanager_pb2.TManagerLocation(
        topology_name=NAME, topology_id=launch.topology_id, host="127.0.0.1",
        controller_endpoint=tm.endpoint), ephemeral=True)
    try:
        yield tm
    finally:
        state.close()  # removes the ephemeral location
        tm.close()


def checkpoints(api, name: str = NAME) -> dict:
    answer = api.get("/topologies/checkpoints", params={"topology": name})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_checkpoints_the_topology_master_s_figures_and_each_task_s_state(api, standin_tm):
    found = checkpoints(api)
    assert found["effectively_once"] is True and found["reliability_mode"] == "EFFECTIVELY_ONCE"
    assert found["interval_secs"] == 1.0 and found["note"] == ""
    assert [c["checkpoint_id"] for c in found["consistent"]] == [
        "ckpt-0000000000007", "ckpt-0000000000006", "ckpt-0000000000005"]
    newest = found["consistent"][0]
    assert newest["completed_at"] == 1_700_000_007.0 and newest["bytes"] == 5007
    assert newest["duration_secs"] == 0.04 and newest["packing_plan_id"]
    tm = found["tmanager"]
    assert {k: tm[k] for k in ("completed", "abandoned", "last_checkpoint_id", "last_duration_ms",
                               "last_bytes", "restores", "rollbacks", "last_restore_ms")} == {
        "completed": 7, "abandoned": 2, "last_checkpoint_id": "ckpt-0000000000007",
        "last_duration_ms": 41, "last_bytes": 5120, "restores": 3, "rollbacks": 2,
        "last_restore_ms": 230}
    assert tm["last_restore"] == {"reason": "stmgr-2 restarted",
                                  "checkpoint_id": "ckpt-0000000000003", "at_start": False}
    # the restore log, newest first, each with its reason; "" is the empty state at start
    assert [(r["reason"], r["checkpoint_id"], r["at_start"]) for r in tm["restore_log"]] == [
        ("stmgr-2 restarted", "ckpt-0000000000003", False),
        ("task 1 (count) failed: RuntimeError: injected failure", "ckpt-0000000000002", False),
        ("the topology started", "", True)]
    # the last resize: the key groups that moved with the counting bolt's state
    assert tm["last_rescale"] == [{"component": "count", "tasks_before": 2, "tasks_after": 5,
                                   "key_groups_moved": 77}]
    tasks = {t["instance"]: t for t in found["tasks"]}
    assert set(tasks) == {"container_1_count_1", "container_2_split_6"}
    count = tasks["container_1_count_1"]
    assert count == {"instance": "container_1_count_1", "component": "count", "task_id": 1,
                     "stateful": True, "saves": 7, "state_bytes": 2048, "save_ms": 1.25,
                     "restores": 3, "restore_ms": 4.5, "stale_secs": None,
                     "keyed_keys": 1200, "key_groups": 26, "keys_written": 40}
    split = tasks["container_2_split_6"]
    assert split["stateful"] is False and split["state_bytes"] == 0
    assert split["stale_secs"] == 12.5  # frozen figures are marked, as /metrics marks them
    assert found["stmgrs"] == [{"id": "stmgr-1", "markers_sent": 14, "alignments_abandoned": 1,
                                "held_bytes": 300, "rollback_discarded_messages": 25}]
    assert found["endtime"] is not None


def test_a_restore_log_that_does_not_parse_leaves_the_other_figures(api, standin_tm):
    tm_key = ("__tmanager__", "heron-tmanager")
    standin_tm.figures = {tm_key: {**FIGURES[tm_key], "__restore-log": "not json"}}
    tm = checkpoints(api)["tmanager"]
    assert tm["restore_log"] == [] and tm["rollbacks"] == 0
    assert tm["completed"] == 7 and tm["last_restore"]["reason"] == "stmgr-2 restarted"


def test_a_topology_master_with_no_checkpoint_figures_yet_says_so(api, standin_tm):
    standin_tm.figures = {("__stmgr__", "stmgr-1"): FIGURES[("__stmgr__", "stmgr-1")]}
    found = checkpoints(api)
    assert found["tmanager"] is None and "no checkpoint figures yet" in found["note"]
    assert len(found["consistent"]) == 3 and len(found["stmgrs"]) == 1


def test_without_a_topology_master_the_stored_checkpoints_are_still_served(api):
    found = checkpoints(api)
    assert found["effectively_once"] is True and found["tmanager"] is None
    assert found["tasks"] == [] and found["endtime"] is None
    assert f"the Topology Master of {NAME!r} is not running" in found["note"]
    assert len(found["consistent"]) == 3  # what a rollback would use


def test_a_topology_in_another_mode_is_an_answer_not_an_error(api):
    found = checkpoints(api, TRACKED)
    assert found["effectively_once"] is False and found["reliability_mode"] == "ATLEAST_ONCE"
    assert "takes no checkpoints" in found["note"] and "EFFECTIVELY_ONCE" in found["note"]
    assert found["consistent"] == [] and found["tmanager"] is None and found["tasks"] == []


def test_unknown_topologies_and_bad_names_are_the_usual_errors(api):
    answer = api.get("/topologies/checkpoints", params={"topology": "nope"})
    assert answer.status_code == 404 and NAME in answer.json()["detail"]
    answer = api.get("/topologies/checkpoints", params={"topology": NAME, "cluster": "prod"})
    assert answer.status_code == 404 and "not 'prod'" in answer.json()["detail"]
    answer = api.get("/topologies/checkpoints", params={"topology": "a/b"})
    assert answer.status_code == 422 and "parameter 'topology'" in answer.json()["detail"]
    answer = api.get("/topologies/checkpoints")
    assert answer.status_code == 422 and "missing query parameter 'topology'" \
        in answer.json()["detail"]
    schema = api.get("/openapi.json").json()
    assert "/topologies/checkpoints" in schema["paths"]
    assert "CheckpointsModel" in schema["components"]["schemas"]
