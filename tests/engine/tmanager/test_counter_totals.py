"""The Topology Master adds up an instance's counters across its restarts: after a
``kill -9`` of a bolt, ``heron metrics`` and ``heron run`` show what the topology executed
in total, not what the new process has executed since it started."""

from __future__ import annotations

from engine.messages import tmanager_pb2
from engine.tmanager.counter_totals import CounterTotals
from engine.tmanager.master import TopologyMaster

BOLT = ("count", "container_1_count_3")


def master() -> TopologyMaster:
    tm = object.__new__(TopologyMaster)  # the metrics book only
    tm.metrics, tm.reported_at, tm.exceptions = {}, {}, {}
    tm.counter_totals = CounterTotals()
    return tm


def report(tm: TopologyMaster, **values: str) -> dict[str, str]:
    message = tmanager_pb2.PublishMetrics()
    for name, value in values.items():
        message.metrics.add(component_name=BOLT[0], instance_id=BOLT[1],
                            name=f"__{name.replace('_', '-')}", value=value)
    tm._on_server(b"metricsmgr-1", message)
    return tm.metrics[BOLT]


def test_a_restarted_instance_keeps_counting_from_its_total():
    tm = master()
    assert report(tm, execute_count="500", execute_latency="0.2")["__execute-count"] == "500"
    assert report(tm, execute_count="900")["__execute-count"] == "900"
    # killed: the new process counts from 0 again
    after = report(tm, execute_count="40", execute_latency="0.3")
    assert after["__execute-count"] == "940"
    assert after["__execute-latency"] == "0.3"  # a gauge is what it is
    assert report(tm, execute_count="100")["__execute-count"] == "1000"
    # and again
    assert report(tm, execute_count="5")["__execute-count"] == "1005"


def test_an_instance_that_left_the_plan_takes_its_totals_with_it():
    totals = CounterTotals()
    assert totals.total(BOLT, "__emit-count", "10") == "10"
    assert totals.total(BOLT, "__emit-count", "2") == "12"
    totals.forget(BOLT)
    assert totals.total(BOLT, "__emit-count", "3") == "3"
    assert totals.total(BOLT, "__emit-count", "not a number") == "not a number"
