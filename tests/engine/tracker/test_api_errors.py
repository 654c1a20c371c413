"""The tracker's answers when things are missing, slow or malformed, and its metric
windows, against a submitted topology whose Topology Master is a stand-in the test
controls (no engine processes): clear HTTP errors, and the server keeps serving."""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest
import zmq

import engine.tools.ui as engine_ui
from engine.common.launch import StateManagerSpec, Submission
from engine.common.network import bind_router, decode, encode
from engine.common.security.guard import ConnectionGuard
from engine.messages import common_pb2, tmanager_pb2
from tests.engine.tracker.conftest import NAME, PROJECT, TM_TIMEOUT, client, tracker_app

pytestmark = pytest.mark.timeout(60)

SPOUT = "container_1_sentence_spout_3"


class StandInTopologyMaster:
    """Answers MetricRequest with counters that grow by 100 per request and a steady
    latency, and ExceptionLogRequest with one exception; ``silent`` stops all answers.
    One thread owns the socket."""

    def __init__(self, launch) -> None:
        self.ctx = zmq.Context()
        # secured like the real one: the tracker must present the topology's keys
        self.guard = ConnectionGuard.for_launch(self.ctx, launch, process="standin-tm")
        self.sock, self.endpoint = bind_router(self.ctx, "tcp://127.0.0.1:0", mandatory=False,
                                               guard=self.guard, kind="controller")
        self.silent = threading.Event()
        self._stop = threading.Event()
        self.requests = 0
        self.thread = threading.Thread(target=self._loop, name="standin-tm", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            if not self.sock.poll(50):
                continue
            frames = self.sock.recv_multipart()
            if self.silent.is_set():
                continue
            message = decode(frames[1:])
            if isinstance(message, tmanager_pb2.MetricRequest):
                self.requests += 1
                response = tmanager_pb2.MetricResponse(
                    status=common_pb2.Status(status=common_pb2.OK)
                )
                spout = response.metric.add(instance_id=SPOUT)
                spout.metric.add(name="sentence_spout/__emit-count", value=str(100 * self.requests))
                spout.metric.add(name="sentence_spout/__complete-latency", value="2.5")
                spout.metric.add(name="sentence_spout/__last-error", value="ValueError: x")
                stmgr = response.metric.add(instance_id="stmgr-1")
                stmgr.metric.add(name="__stmgr__/__backpressure", value="1")
                stmgr.metric.add(name="__stmgr__/__tuples-sent", value=str(10 * self.requests))
            else:
                response = tmanager_pb2.ExceptionLogResponse(
                    status=common_pb2.Status(status=common_pb2.OK))
                response.exceptions.add(component_name="split_bolt",
                                        instance_id="container_2_split_bolt_4",
                                        hostname="127.0.0.1", stacktrace="KeyError: 'w'\n  at x",
                                        lasttime="1700000000", count=3)
            self.sock.send_multipart([frames[0], *encode(response)])

    def close(self) -> None:
        self._stop.set()
        self.thread.join(5)
        self.sock.close(linger=0)
        self.guard.stop()
        self.ctx.term()


@pytest.fixture(scope="module")
def submitted(tmp_path_factory):
    """The test project's topology written to a local state tree (topology, packing
    plan, execution state), as `heron submit` writes it, with no process started."""
    from engine.common.submission import load_topology
    from engine.submitter.deploy import deploy

    saved_path, saved_modules = list(sys.path), set(sys.modules)
    root = tmp_path_factory.mktemp("tracker-state")
    spec = StateManagerSpec(kind="local", root=str(root / "state"))
    loaded = load_topology(PROJECT, name=NAME)
    with spec.open() as state:
        launch = deploy(loaded, state=state, state_spec=spec,
                        working_dir=root / "home" / "topologies" / NAME,
                        submission=Submission(project=str(PROJECT), name=NAME))
    (Path(launch.log_dir) / "stmgr-1.log").write_text("line one\nline two\nline three\n")
    yield spec, launch
    sys.path[:] = saved_path
    for name in set(sys.modules) - saved_modules:
        del sys.modules[name]


@pytest.fixture
def standin_tm(submitted):
    """A stand-in Topology Master published at tmanagers/<name> for the test."""
    spec, launch = submitted
    tm = StandInTopologyMaster(launch)
    state = spec.open()
    state.create("tmanagers", NAME, tmanager_pb2.TManagerLocation(
        topology_name=NAME, topology_id=launch.topology_id, host="127.0.0.1",
        controller_endpoint=tm.endpoint), ephemeral=True)
    try:
        yield tm
    finally:
        state.close()  # removes the ephemeral location
        tm.close()


@pytest.fixture
def api(submitted, serve):
    spec, launch = submitted
    # as `heron submit` lays it out: the working dir is HOME/topologies/NAME
    served = serve(tracker_app(spec, home=Path(launch.working_dir).parent.parent))
    with client(served.url) as http:
        yield http


def still_serving(http) -> None:
    answer = http.get("/topologies")
    assert answer.status_code == 200 and NAME in str(answer.json())


def test_an_unknown_topology_is_a_404_naming_it_and_the_ones_there_are(api):
    for path in ("/topologies/info", "/topologies/logicalplan", "/topologies/metrics",
                 "/topologies/exceptions", "/topologies/logfiles", "/topologies/physicalplan"):
        answer = api.get(path, params={"topology": "no-such-topology"})
        assert answer.status_code == 404, (path, answer.text)
        detail = answer.json()["detail"]
        assert "no topology named 'no-such-topology'" in detail and NAME in detail
    answer = api.get("/topologies/info", params={"topology": NAME, "cluster": "prod"})
    assert answer.status_code == 404 and "cluster 'local', not 'prod'" in answer.json()["detail"]
    answer = api.get("/topologies/metrics", params={"topology": NAME, "component": "nope"})
    assert answer.status_code == 404
    assert "no component 'nope'" in answer.json()["detail"]
    assert "sentence_spout" in answer.json()["detail"]
    still_serving(api)


def test_without_a_topology_master_metrics_are_a_503_and_the_plans_still_answer(api):
    for path in ("/topologies/metrics", "/topologies/exceptions", "/topologies/backpressure"):
        answer = api.get(path, params={"topology": NAME})
        assert answer.status_code == 503, (path, answer.text)
        assert f"the Topology Master of {NAME!r} is not running" in answer.json()["detail"] \
            or "physical plan" in answer.json()["detail"]
    answer = api.get("/topologies/physicalplan", params={"topology": NAME})
    assert answer.status_code == 503 and "not built yet" in answer.json()["detail"]
    logical = api.get("/topologies/logicalplan", params={"topology": NAME})
    assert logical.status_code == 200
    assert sorted(logical.json()["spouts"]) == ["sentence_spout"]
    states = api.get("/topologies/states").json()
    status = states["local"]["default"][NAME]
    assert status["has_tmanager_location"] is False and status["has_physical_plan"] is False
    still_serving(api)


def test_a_topology_master_that_does_not_answer_is_a_503_within_the_bound(api, standin_tm):
    assert api.get("/topologies/metrics", params={"topology": NAME}).status_code == 200
    standin_tm.silent.set()
    began = time.monotonic()
    answer = api.get("/topologies/metrics", params={"topology": NAME})
    took = time.monotonic() - began
    assert answer.status_code == 503
    detail = answer.json()["detail"]
    assert f"did not answer within {TM_TIMEOUT:g}s" in detail and standin_tm.endpoint in detail
    assert took < TM_TIMEOUT + 3
    # while it is silent, what the state manager holds is still served
    assert api.get("/topologies/logicalplan", params={"topology": NAME}).status_code == 200
    still_serving(api)
    standin_tm.silent.clear()
    assert api.get("/topologies/metrics", params={"topology": NAME}).status_code == 200


@pytest.mark.parametrize("params, parameter", [
    ({"topology": NAME, "interval": "abc"}, "interval"),
    ({"topology": NAME, "interval": "-7"}, "interval"),
    ({"topology": NAME, "interval": "1.5"}, "interval"),
    ({}, "topology"),
    ({"topology": "a/b"}, "topology"),
])
def test_malformed_metric_queries_are_422_naming_the_parameter(api, params, parameter):
    answer = api.get("/topologies/metrics", params=params)
    assert answer.status_code == 422, answer.text
    assert f"parameter '{parameter}'" in answer.json()["detail"]
    still_serving(api)


def test_malformed_log_and_timeline_queries_are_422_naming_the_parameter(api):
    cases = [("/topologies/logfile", {"topology": NAME, "name": "../../../etc/passwd"}, "name"),
             ("/topologies/logfile", {"topology": NAME, "name": "stmgr-1.log", "lines": "0"},
              "lines"),
             ("/topologies/logfile", {"topology": NAME}, "name"),
             ("/topologies/metrics/timeline",
              {"topology": NAME, "starttime": "200", "endtime": "100"}, "starttime"),
             ("/topologies/metrics/timeline", {"topology": NAME, "endtime": "soon"}, "endtime"),
             ("/topologies/backpressure", {"topology": NAME, "interval": "x"}, "interval")]
    for path, params, parameter in cases:
        answer = api.get(path, params=params)
        assert answer.status_code == 422, (path, params, answer.text)
        assert f"parameter '{parameter}'" in answer.json()["detail"], answer.text
    missing = api.get("/topologies/logfile", params={"topology": NAME, "name": "nope.log"})
    assert missing.status_code == 404 and "stmgr-1.log" in missing.json()["detail"]
    tail = api.get("/topologies/logfile", params={"topology": NAME, "name": "stmgr-1.log",
                                                  "lines": "2"})
    assert tail.status_code == 200 and tail.text == "line two\nline three\n"
    assert tail.headers["content-type"].startswith("text/plain")
    still_serving(api)


def test_metric_windows_count_increases_and_keep_gauges(api, standin_tm):
    first = api.get("/topologies/metrics", params={"topology": NAME}).json()
    assert first["interval"] == -1 and first["starttime"] is None
    assert first["components"] == {SPOUT: "sentence_spout", "stmgr-1": "__stmgr__"}
    time.sleep(1.2)  # the poller (every 0.5 s) records snapshots meanwhile
    window = api.get("/topologies/metrics", params={"topology": NAME, "interval": "1",
                                                    "component": "sentence_spout"}).json()
    total = api.get("/topologies/metrics", params={"topology": NAME}).json()
    assert window["component"] == "sentence_spout" and set(window["components"]) == {SPOUT}
    assert window["starttime"] is not None and 0.5 <= window["endtime"] - window["starttime"] <= 3
    emitted_total = total["metrics"]["__emit-count"][SPOUT]
    emitted_window = window["metrics"]["__emit-count"][SPOUT]
    assert emitted_total > first["metrics"]["__emit-count"][SPOUT]
    assert 0 < emitted_window < emitted_total  # an increase, not the cumulative count
    assert window["metrics"]["__complete-latency"][SPOUT] == 2.5  # a gauge: its value
    assert window["metrics"]["__last-error"][SPOUT] == "ValueError: x"
    named = api.get("/topologies/metrics", params={
        "topology": NAME, "metricname": ["__tuples-sent", "__backpressure"],
        "component": "__stmgr__"}).json()
    assert set(named["metrics"]) == {"__tuples-sent", "__backpressure"}
    timeline = api.get("/topologies/metrics/timeline", params={
        "topology": NAME, "metricname": "__emit-count"}).json()
    points = timeline["timeline"]["__emit-count"][SPOUT]
    assert len(points) >= 2
    values = [v for _, v in sorted(points.items(), key=lambda kv: float(kv[0]))]
    assert values == sorted(values)


def test_exceptions_come_from_the_topology_master_with_a_summary(api, standin_tm):
    exceptions = api.get("/topologies/exceptions", params={"topology": NAME}).json()
    assert exceptions == [{"component": "split_bolt", "instance_id": "container_2_split_bolt_4",
                           "hostname": "127.0.0.1", "stacktrace": "KeyError: 'w'\n  at x",
                           "firsttime": "", "lasttime": "1700000000", "count": 3, "logging": "",
                           "logfile": None}]
    summary = api.get("/topologies/exceptionsummary", params={"topology": NAME}).json()
    assert summary == [{"class_name": "KeyError", "component": "split_bolt", "count": 3,
                        "firsttime": "", "lasttime": "1700000000",
                        "instances": ["container_2_split_bolt_4"]}]


def test_openapi_and_the_page_are_served_from_this_origin_only(api):
    spec = api.get("/openapi.json").json()
    for path in ("/topologies", "/topologies/states", "/topologies/info",
                 "/topologies/logicalplan", "/topologies/physicalplan", "/topologies/packingplan",
                 "/topologies/executionstate", "/topologies/metrics",
                 "/topologies/metrics/timeline", "/topologies/exceptions",
                 "/topologies/backpressure", "/topologies/logfiles", "/topologies/logfile"):
        assert path in spec["paths"], path
    docs = api.get("/docs")
    assert docs.status_code == 200
    # Swagger UI from this origin, not a CDN: every src/href is a local path
    linked = re.findall(r'(?:src|href)="([^"]*)"', docs.text) + \
        re.findall(r"url: '([^']*)'", docs.text)
    assert linked and all(u.startswith("/") for u in linked), linked
    for url in linked:
        assert api.get(url).status_code == 200, url
    page = api.get("/ui/topologies/" + NAME)
    assert page.status_code == 200 and "<main id=\"app\">" in page.text
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert "http" not in page.text.replace("http-equiv", "")  # no asset from elsewhere
    static = Path(engine_ui.__file__).parent / "static"
    scripts = sorted(f"/static/{p.name}" for p in static.glob("*.js") if ".min." not in p.name)
    assert "/static/heron-ui.js" in scripts
    for asset in (*scripts, "/static/heron-ui.css", "/static/favicon.svg"):
        answer = api.get(asset)
        assert answer.status_code == 200 and "://" not in answer.text.replace(
            "http://www.w3.org/2000/svg", ""), asset
    assert api.get("/", follow_redirects=False).headers["location"] == "/ui/"


def test_only_regular_files_in_the_logs_folder_are_served(api, submitted, tmp_path):
    """A symlink (to a file outside the logs folder, or even inside it), a directory and
    a FIFO named like log files are neither listed nor served; paths are 422."""
    _spec, launch = submitted
    log_dir = Path(launch.log_dir)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the tracker\n")
    planted = {"outside.log": "symbolic link", "inside.log": "symbolic link",
               "folder.log": "directory", "pipe.log": "FIFO"}
    os.symlink(secret, log_dir / "outside.log")
    os.symlink(log_dir / "stmgr-1.log", log_dir / "inside.log")
    (log_dir / "folder.log").mkdir()
    os.mkfifo(log_dir / "pipe.log")
    try:
        listed = {f["name"] for f in api.get("/topologies/logfiles",
                                             params={"topology": NAME}).json()}
        assert "stmgr-1.log" in listed and not listed & set(planted)
        for name, kind in planted.items():
            answer = api.get("/topologies/logfile", params={"topology": NAME, "name": name})
            assert answer.status_code == 404, (name, answer.text)
            detail = answer.json()["detail"]
            assert name in detail and kind in detail and "only regular files" in detail
            assert "not for the tracker" not in answer.text
        for name in ("../secret.txt", "../../outside.log", "/etc/passwd", str(secret),
                     "..", "sub/stmgr-1.log"):
            answer = api.get("/topologies/logfile", params={"topology": NAME, "name": name})
            assert answer.status_code == 422, (name, answer.text)
            assert "parameter 'name'" in answer.json()["detail"]
        still_serving(api)
    finally:
        for name in planted:
            path = log_dir / name
            path.rmdir() if name == "folder.log" else path.unlink()


def test_a_topology_on_the_local_scheduler_has_no_cluster_scheduler_status(api):
    answer = api.get("/topologies/scheduler", params={"topology": NAME})
    assert answer.status_code == 404
    assert "no cluster scheduler status" in answer.json()["detail"]


def test_health_records_are_served_as_heron_health_prints_them(api, submitted):
    from engine.healthmgr.records import HealthEvent, Note
    from engine.healthmgr.state import LoopState
    from engine.healthmgr.store import HealthStore

    spec, launch = submitted
    assert api.get("/topologies/health", params={"topology": NAME}).json() == {
        "topology": NAME, "mode": "disabled", "enabled": False, "records": []}
    with spec.open() as state:
        HealthStore(state, NAME, launch.topology_id).save(
            LoopState(), [HealthEvent("p", Note(5.0, "resumed: windows start now"))])
        try:
            answer = api.get("/topologies/health", params={"topology": NAME})
            assert answer.status_code == 200
            assert answer.json()["records"] == [{"type": "note", "time": 5.0, "policy": "p",
                                                 "component": "",
                                                 "message": "resumed: windows start now"}]
        finally:
            state.delete("healthmgr", NAME)
    assert api.get("/topologies/health", params={"topology": "nosuch"}).status_code == 404
