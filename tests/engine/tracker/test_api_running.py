"""The tracker's API contract against a running topology (spout -> split -> count, two
containers, acking), with its state in the local state manager and in a real ZooKeeper:
what each endpoint returns, that metrics move, and that a stopped Topology Master is a
503 while everything else keeps answering."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from engine.common.launch import StateManagerSpec
from tests.engine.tracker.conftest import (
    COMPONENTS,
    NAME,
    TM_TIMEOUT,
    ServedApp,
    client,
    start_topology,
    tracker_app,
    wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TASKS = {"sentence_spout": 1, "split_bolt": 2, "count_bolt": 2}


@pytest.fixture(scope="module", params=["local", "zookeeper"])
def running(request):
    """The topology on each state manager: the package's shared local one, or one of
    its own with its state in ZooKeeper."""
    if request.param == "local":
        yield request.getfixturevalue("local_topology")
        return
    zookeeper = request.getfixturevalue("zookeeper")
    saved_path, saved_modules = list(sys.path), set(sys.modules)
    working_dir = Path(tempfile.mkdtemp(prefix="tracker-zk-test-"))
    spec = StateManagerSpec(kind="zookeeper", zk_hosts=zookeeper.hosts,
                            zk_root=f"/heron-tracker-{uuid.uuid4().hex[:10]}")
    topology = start_topology(spec, working_dir)
    try:
        yield topology
    finally:
        topology.runner.stop(drain=0)
        shutil.rmtree(working_dir, ignore_errors=True)
        sys.path[:] = saved_path
        for name in set(sys.modules) - saved_modules:
            del sys.modules[name]


@pytest.fixture(scope="module")
def api(running):
    served = ServedApp(tracker_app(running.state_spec)).start()
    try:
        with client(served.url) as http:
            yield http
    finally:
        served.close()


def get(api, path: str, **params):
    answer = api.get(path, params={"topology": NAME, **params})
    assert answer.status_code == 200, (path, answer.status_code, answer.text)
    return answer.json()


def spout_instance(api) -> str:
    return get(api, "/topologies/physicalplan")["spouts"]["sentence_spout"][0]


def test_the_topology_is_listed_with_its_cluster_environ_and_state(api, running):
    user = get(api, "/topologies/executionstate")["role"]
    assert api.get("/topologies").json() == {"local": {user: {"default": [NAME]}}}
    assert api.get("/topologies", params={"cluster": "elsewhere"}).json() == {}
    assert api.get("/clusters").json() == ["local"]
    status = api.get("/topologies/states").json()["local"]["default"][NAME]
    assert status["state"] == "RUNNING" and status["id"].startswith(f"{NAME}-")
    assert status["has_tmanager_location"] and status["has_physical_plan"]
    assert status["has_packing_plan"] and status["submission_time"] > 1_600_000_000


def test_the_plans_describe_the_running_topology(api, running):
    logical = get(api, "/topologies/logicalplan")
    assert list(logical["spouts"]) == ["sentence_spout"]
    assert sorted(logical["bolts"]) == ["count_bolt", "split_bolt"]
    assert logical["component_order"] == list(COMPONENTS) and logical["stages"] == 3
    split, count = logical["bolts"]["split_bolt"], logical["bolts"]["count_bolt"]
    assert split["inputs"] == [{"stream_name": "default", "component_name": "sentence_spout",
                                "grouping": "shuffle", "fields": [], "custom_grouping": None}]
    assert count["inputs"][0]["grouping"] == "fields" and count["inputs"][0]["fields"] == ["word"]
    assert count["inputComponents"] == ["split_bolt"] and count["parallelism"] == 2
    assert logical["spouts"]["sentence_spout"]["spout_source"] == "tracker_parts:SentenceSpout"

    physical = get(api, "/topologies/physicalplan")
    assert physical["state"] == "RUNNING" and physical["id"] == logical["id"]
    assert {c: len(ids) for c, ids in {**physical["spouts"], **physical["bolts"]}.items()} == TASKS
    assert sorted(physical["stmgrs"]) == ["stmgr-1", "stmgr-2"]
    placed = [i for s in physical["stmgrs"].values() for i in s["instance_ids"]]
    assert sorted(placed) == sorted(physical["instances"])
    for instance in physical["instances"].values():
        assert instance["container"] == physical["stmgrs"][instance["stmgr_id"]]["container"]
        assert instance["logfile"] is not None
    assert physical["config"]["topology.workers"] == 2

    packing = get(api, "/topologies/packingplan")
    assert sorted(c["id"] for c in packing["container_plans"]) == [1, 2]
    packed = {i["task_id"]: i["component_name"] for c in packing["container_plans"]
              for i in c["instances"]}
    assert packed == {i["task_id"]: i["name"] for i in physical["instances"].values()}

    execution = get(api, "/topologies/executionstate")
    assert execution["topology_id"] == logical["id"] and execution["cluster"] == "local"
    info = get(api, "/topologies/info")
    assert info["tmanager_location"]["controller_endpoint"].startswith("tcp://127.0.0.1:")
    assert info["physical_plan"] == physical and info["logical_plan"] == logical
    assert Path(info["working_dir"]) == running.working_dir.resolve()
    layout = get(api, "/topologies/logicalplan/layout")
    assert [n["name"] for n in layout["nodes"]] == list(COMPONENTS)
    assert len(layout["edges"]) == 2
    config = get(api, "/topologies/config")
    assert config["config"]["topology.message.timeout.secs"] == 5


def test_metrics_move_per_component_and_instance_over_windows(api):
    spout = spout_instance(api)
    first = get(api, "/topologies/metrics", component="sentence_spout")
    assert set(first["components"]) == {spout}
    emitted = first["metrics"]["__emit-count"][spout]
    assert wait_until(lambda: get(api, "/topologies/metrics", component="sentence_spout",
                                  metricname="__emit-count")["metrics"]["__emit-count"][spout]
                      > emitted, 10), "the spout's emit count did not grow"

    window = get(api, "/topologies/metrics", component="sentence_spout", interval=2)
    total = get(api, "/topologies/metrics", component="sentence_spout")
    assert 0 < window["endtime"] - window["starttime"] <= 60
    assert 0 < window["metrics"]["__emit-count"][spout] < total["metrics"]["__emit-count"][spout]
    assert total["metrics"]["__complete-latency"][spout] > 0  # acking: end-to-end latency, ms

    bolts = get(api, "/topologies/metrics", component="count_bolt", metricname="__execute-count")
    assert set(bolts["metrics"]) == {"__execute-count"} and len(bolts["components"]) == 2
    assert all(v > 0 for v in bolts["metrics"]["__execute-count"].values())
    one = min(bolts["components"])
    only = get(api, "/topologies/metrics", component="count_bolt", instance=one)
    assert set(only["components"]) == {one}
    stmgrs = get(api, "/topologies/metrics", component="__stmgr__")
    assert set(stmgrs["components"]) == {"stmgr-1", "stmgr-2"}
    assert "__backpressure" in stmgrs["metrics"] and "__tuples-sent" in stmgrs["metrics"]
    other = api.get("/topologies/metrics", params={"topology": NAME, "component": "count_bolt",
                                                   "instance": spout})
    assert other.status_code == 404 and "belongs to 'sentence_spout'" in other.json()["detail"]

    timeline = get(api, "/topologies/metrics/timeline", component="sentence_spout",
                   metricname="__emit-count")
    points = timeline["timeline"]["__emit-count"][spout]
    assert len(points) >= 2
    values = [v for _, v in sorted(points.items(), key=lambda kv: float(kv[0]))]
    assert values == sorted(values) and values[-1] > values[0]


def test_parallelism_over_time_is_recorded_from_the_physical_plan(api):
    """Each of the tracker's snapshots keeps the instances per component of the physical
    plan read with it: the web page's parallelism chart (a scaled topology's changes)."""
    def points() -> dict:
        answer = get(api, "/topologies/metrics/parallelism")
        return answer["parallelism"] if all(
            len(answer["parallelism"].get(c, {})) >= 2 for c in COMPONENTS) else {}
    series = wait_until(points, 20, 0.5)
    assert sorted(series) == sorted(COMPONENTS), series
    for component, by_time in series.items():
        assert set(by_time.values()) == {TASKS[component]}, (component, by_time)
    one = get(api, "/topologies/metrics/parallelism", component="count_bolt")
    assert list(one["parallelism"]) == ["count_bolt"]
    assert api.get("/topologies/metrics/parallelism", params={
        "topology": NAME, "component": "nosuch"}).status_code == 404
    assert api.get("/topologies/metrics/parallelism", params={
        "topology": NAME, "starttime": 10, "endtime": 5}).status_code == 422


def test_a_timeline_takes_metric_prefixes_and_names_each_ids_component(api):
    """``NAME*`` asks for per-instance metrics whose instances come and go (the page's
    backpressure chart), and ``components`` says whose each id is."""
    prefix = "__time_spent_back_pressure_by_compid/"
    instances = get(api, "/topologies/physicalplan")["instances"]

    def answer() -> dict:
        found = get(api, "/topologies/metrics/timeline",
                    metricname=[prefix + "*", "__emit-count"])
        named = {m[len(prefix):] for m in found["timeline"] if m.startswith(prefix)}
        return found if named == set(instances) else {}
    found = wait_until(answer, 20, 0.5)
    assert found, "every instance's backpressure time in the timeline"
    assert set(found["timeline"]) == {prefix + i for i in instances} | {"__emit-count"}
    for metric, by_id in found["timeline"].items():
        for ident in by_id:
            expected = "__stmgr__" if metric.startswith(prefix) else instances[ident]["name"]
            assert found["components"][ident] == expected, (metric, ident)


def test_backpressure_is_reported_per_stream_manager_and_instance(api):
    bp = get(api, "/topologies/backpressure", interval=30)
    assert sorted(bp["stmgrs"]) == ["stmgr-1", "stmgr-2"]
    for stmgr in bp["stmgrs"].values():
        assert isinstance(stmgr["paused"], bool) and stmgr["time_paused_ms"] is not None
        assert stmgr["buffered_bytes"] is not None
    assert len(bp["instances"]) == 5
    spouts = [i for i in bp["instances"].values() if i["spout"]]
    assert [i["component"] for i in spouts] == ["sentence_spout"]


def test_exceptions_and_logs_of_the_instances(api):
    assert wait_until(lambda: get(api, "/topologies/exceptions", component="split_bolt"), 15), \
        "the splitter's exception never reached the tracker"
    exceptions = get(api, "/topologies/exceptions", component="split_bolt")
    assert {e["component"] for e in exceptions} == {"split_bolt"}
    assert all("ValueError: tracker test: a sentence the splitter refuses" in e["stacktrace"]
               and e["count"] >= 1 for e in exceptions)
    summary = get(api, "/topologies/exceptionsummary")
    assert [(s["component"], s["class_name"]) for s in summary] == [("split_bolt", "ValueError")]
    log_text = api.get(exceptions[0]["logfile"]).text
    assert "ValueError" in log_text

    files = {f["name"]: f for f in get(api, "/topologies/logfiles")}
    assert {"heron-tmanager.log", "stmgr-1.log", "stmgr-2.log", "executor-0.log"} <= set(files)
    assert files["stmgr-2.log"]["container"] == 2 and files["heron-tmanager.log"]["container"] == 0
    tail = api.get(files["stmgr-1.log"]["url"] + "&lines=3")
    assert tail.status_code == 200 and 1 <= len(tail.text.splitlines()) <= 3


def test_a_stopped_topology_master_is_a_503_and_the_server_keeps_serving(local_topology, serve):
    served = serve(tracker_app(local_topology.state_spec))
    api = client(served.url)
    assert api.get("/topologies/metrics", params={"topology": NAME}).status_code == 200
    pid = local_topology.tmanager_pid()
    os.kill(pid, signal.SIGSTOP)  # alive, holding its location, answering nothing
    try:
        began = time.monotonic()
        answer = api.get("/topologies/metrics", params={"topology": NAME})
        assert answer.status_code == 503, answer.text
        assert time.monotonic() - began < TM_TIMEOUT + 3
        assert "did not answer within" in answer.json()["detail"]
        assert api.get("/topologies/exceptions", params={"topology": NAME}).status_code == 503
        assert api.get("/topologies/logicalplan", params={"topology": NAME}).status_code == 200
        assert api.get("/topologies/physicalplan", params={"topology": NAME}).status_code == 200
        assert NAME in str(api.get("/topologies").json())
    finally:
        os.kill(pid, signal.SIGCONT)
    assert wait_until(lambda: api.get("/topologies/metrics", params={
        "topology": NAME}).status_code == 200, 20), "the tracker did not recover"
    api.close()


def test_a_stuck_instance_s_figures_are_marked_stale_until_it_reports_again(api, running):
    """An instance that neither dies nor publishes (stopped): the Topology Master still
    holds its last figures, and the answer marks them stale with their age."""
    from engine.common.process.spawn import read_pid_file

    bolts = get(api, "/topologies/metrics", component="count_bolt", metricname="__execute-count")
    assert bolts["stale"] == {}
    victim = min(bolts["components"])
    proc = read_pid_file(running.working_dir / "pids" / f"{victim}.pid")
    assert proc is not None, f"no pid file for {victim} in {running.working_dir / 'pids'}"
    proc.send_signal(signal.SIGSTOP)
    try:
        marked = wait_until(lambda: get(api, "/topologies/metrics",
                                        component="count_bolt")["stale"], 20, 0.5)
        assert set(marked) == {victim} and marked[victim] > 5, marked
    finally:
        proc.send_signal(signal.SIGCONT)
    assert wait_until(lambda: not get(api, "/topologies/metrics",
                                      component="count_bolt")["stale"], 20, 0.5), \
        "the instance's figures stayed stale after it reported again"
