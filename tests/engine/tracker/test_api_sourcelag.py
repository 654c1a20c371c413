"""``/topologies/sourcelag``: Kafka spouts' consumer lag per partition and per component
(issue 39), against the tracker test topology submitted to a local state tree with no
process started and a stand-in Topology Master (test_api_checkpoints.py's, secured like
the real one) answering what a Kafka spout reports: Storm's
``kafkaOffset/<topic>/partition_<n>/...`` user metrics. The page's card over the same
stand-in is checked in test_ui_sourcelag_browser.py.
"""

from __future__ import annotations

import sys

import pytest

from engine.common.launch import StateManagerSpec, Submission
from engine.messages import tmanager_pb2
from tests.engine.tracker.conftest import NAME, PROJECT, client, tracker_app
from tests.engine.tracker.test_api_checkpoints import StandInTopologyMaster

pytestmark = pytest.mark.timeout(60)

P = "user/kafkaOffset/"
SPOUT = "sentence_spout"
#: what the stand-in Topology Master reports: (component, instance) -> {metric: value};
#: the spout's task 3 is in the packing plan, task 6 is not
FIGURES: dict[tuple[str, str], dict[str, str]] = {
    (SPOUT, "container_1_sentence_spout_3"): {
        "__emit-count": "1095", P + "orders/partition_0/spoutLag": "5",
        P + "orders/partition_0/latestEmittedOffset": "1095",
        P + "orders/partition_0/latestCompletedOffset": "1090",
        P + "orders/partition_0/earliestTimeOffset": "0",
        P + "orders/partition_0/latestTimeOffset": "1100",
        P + "orders/partition_2/spoutLag": "0", P + "totalSpoutLag": "5"},
    (SPOUT, "container_2_sentence_spout_6"): {
        P + "orders/partition_1/spoutLag": "12000", "__report-age": "9.5"},
    ("count_bolt", "container_1_count_bolt_5"): {"__execute-count": "2000", "user/hits": "4"},
}


@pytest.fixture(scope="module")
def submitted(tmp_path_factory):
    """The tracker test topology written to a local state tree as `heron submit` writes it."""
    from engine.common.submission import load_topology
    from engine.submitter.deploy import deploy

    saved_path, saved_modules = list(sys.path), set(sys.modules)
    root = tmp_path_factory.mktemp("tracker-lag")
    spec = StateManagerSpec(kind="local", root=str(root / "state"))
    with spec.open() as state:
        launch = deploy(load_topology(PROJECT, name=NAME), state=state, state_spec=spec,
                        working_dir=root / "home" / "topologies" / NAME,
                        submission=Submission(project=str(PROJECT), name=NAME))
    yield spec, launch, root
    sys.path[:] = saved_path
    for name in set(sys.modules) - saved_modules:
        del sys.modules[name]


@pytest.fixture
def standin_tm(submitted):
    """A stand-in Topology Master reporting FIGURES, published at tmanagers/."""
    spec, launch, _ = submitted
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


@pytest.fixture
def api(submitted, serve):
    spec, _, root = submitted
    served = serve(tracker_app(spec, home=root / "home"))
    with client(served.url) as http:
        yield http


def source_lag(api, **params: str) -> dict:
    answer = api.get("/topologies/sourcelag", params={"topology": NAME, **params})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_lag_per_partition_and_per_component(api, standin_tm):
    found = source_lag(api)
    assert found["topology"] == NAME and found["note"] == "" and found["endtime"] is not None
    rows = [(r["instance"], r["topic"], r["partition"], r["lag"]) for r in found["partitions"]]
    assert rows == [("container_1_sentence_spout_3", "orders", 0, 5),
                    ("container_2_sentence_spout_6", "orders", 1, 12000),
                    ("container_1_sentence_spout_3", "orders", 2, 0)]
    first = found["partitions"][0]
    assert first == {"component": SPOUT, "instance": "container_1_sentence_spout_3",
                     "task_id": 3, "topic": "orders", "partition": 0, "lag": 5,
                     "emitted_offset": 1095, "committed_offset": 1090, "earliest_offset": 0,
                     "end_offset": 1100, "stale_secs": None}
    second = found["partitions"][1]
    assert second["end_offset"] is None and second["stale_secs"] == 9.5  # frozen figures
    assert second["task_id"] is None  # not in the plan (a spout task scaled away)
    assert found["components"] == [{"component": SPOUT, "lag": 12005, "max_lag": 12000,
                                    "partitions": 3, "topics": ["orders"], "instances": 2}]


def test_one_component_and_a_topology_without_kafka(api, standin_tm):
    assert source_lag(api, component="count_bolt")["partitions"] == []
    assert len(source_lag(api, component=SPOUT)["partitions"]) == 3
    standin_tm.figures = {k: v for k, v in FIGURES.items() if k[0] == "count_bolt"}
    found = source_lag(api)
    assert found["partitions"] == [] and found["components"] == []
    assert "no instance reports Kafka offsets" in found["note"]


def test_the_usual_errors_and_the_openapi_schema(api):
    answer = api.get("/topologies/sourcelag", params={"topology": NAME})
    assert answer.status_code == 503 and "not running" in answer.json()["detail"]
    answer = api.get("/topologies/sourcelag", params={"topology": "nope"})
    assert answer.status_code == 404
    answer = api.get("/topologies/sourcelag", params={"topology": NAME, "component": "nope"})
    assert answer.status_code == 404 and SPOUT in answer.json()["detail"]
    answer = api.get("/topologies/sourcelag", params={"topology": NAME, "cluster": "prod"})
    assert answer.status_code == 404 and "not 'prod'" in answer.json()["detail"]
    schema = api.get("/openapi.json").json()
    assert "/topologies/sourcelag" in schema["paths"]
    assert {"SourceLagModel", "PartitionLagModel", "ComponentLagModel"} <= set(
        schema["components"]["schemas"])
