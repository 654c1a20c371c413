"""Real, unchanged pystorm/streamparse components run through ``streamparse_run``.

pystorm's own protocol code talks to the bridge here, so these pin that an
unchanged streamparse project works: auto-anchoring and auto-acking,
manual ack/fail, log levels, metrics, ``need_task_ids`` round trips, ticks,
spout commands, and both serializers.
"""
from __future__ import annotations

import threading

import pytest

SERIALIZERS = ["json", "msgpack"]


def run_script(serializer: str, target: str) -> str:
    return f"-s {serializer} {target}"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_bolt_auto_anchors_and_auto_acks(start, collector, wait_until, serializer):
    host = start(
        "bolt", "streamparse_run", run_script(serializer, "bolts.SplitBolt"), serializer=serializer
    )
    host.execute(host.make_tuple("-42", "src", "default", 1, ["hello big world"]))
    wait_until(lambda: collector.of("ack"), poll=host.poll)
    assert collector.emits() == [
        ([w], "default", ["-42"], None, False, None) for w in ("hello", "big", "world")
    ]
    assert collector.of("ack") == [("-42",)]
    assert collector.threads == {threading.get_ident()}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_bolt_receives_the_task_ids_it_asks_for(start, collector, wait_until, serializer):
    collector.task_ids = [4, 9]
    host = start(
        "bolt",
        "streamparse_run",
        run_script(serializer, "bolts.TaskIdsBolt"),
        serializer=serializer,
    )
    host.execute(host.make_tuple("1", "src", "default", 1, ["a"]))
    wait_until(lambda: collector.of("ack"), poll=host.poll)
    assert collector.emits() == [(["a"], "default", ["1"], None, True, None),
                                 (["[4, 9]"], "ids", ["1"], None, False, None)]


@pytest.mark.timeout(30)
def test_bolt_manual_fail_log_levels_and_metrics(start, collector, wait_until):
    host = start("bolt", "streamparse_run", "bolts.PickyBolt")
    host.execute(host.make_tuple("1", "src", "default", 1, ["good"]))
    host.execute(host.make_tuple("2", "src", "default", 1, ["bad"]))
    wait_until(lambda: collector.of("fail"), poll=host.poll)
    assert collector.of("ack") == [("1",)] and collector.of("fail") == [("2",)]
    assert collector.emits() == [(["good"], "default", ["1"], None, False, None)]
    assert ("trace me", 0) in collector.logs() and ("careful", 3) in collector.logs()
    assert collector.of("metric") == [("seen", 1), ("seen", 1)]


@pytest.mark.timeout(30)
def test_bolt_handles_ticks_and_acks_them(start, collector, wait_until):
    host = start("bolt", "streamparse_run", "bolts.TickBolt")
    host.execute(host.make_tuple("t1", "__system", "__tick", -1, [2]))
    wait_until(lambda: collector.of("ack"), poll=host.poll)
    assert collector.emits() == [(["tick 2"], "default", ["t1"], None, False, None)]
    assert collector.of("ack") == [("t1",)]


@pytest.mark.timeout(30)
def test_bolt_answers_heartbeats_while_idle(start, collector):
    host = start(
        "bolt", "streamparse_run", "bolts.SplitBolt", {"topology.subprocess.timeout.secs": 2}
    )
    for _ in range(30):  # 3 s, longer than the timeout
        host.poll()
        threading.Event().wait(0.1)
    host.execute(host.make_tuple("1", "src", "default", 1, ["alive"]))


@pytest.mark.timeout(60)
def test_bolt_with_max_pending_one_still_gets_every_tuple_through(start, collector, wait_until):
    """execute blocks on a full queue while answering task-id requests."""
    host = start(
        "bolt", "streamparse_run", "bolts.TaskIdsBolt", {"topology.shellbolt.max.pending": 1}
    )
    for i in range(50):
        host.execute(host.make_tuple(str(i), "src", "default", 1, [f"w{i}"]))
    wait_until(lambda: len(collector.of("ack")) == 50, poll=host.poll)
    assert [a[0] for a in collector.of("ack")] == [str(i) for i in range(50)]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_spout_emits_with_ids_and_hears_acks_and_fails(start, collector, serializer):
    host = start(
        "spout",
        "streamparse_run",
        run_script(serializer, "spouts.CountSpout"),
        serializer=serializer,
    )
    host.activate()
    host.next_tuple()
    host.next_tuple()
    host.ack("id1")
    host.fail("id2")
    host.deactivate()
    assert collector.emits() == [([1], "default", None, None, False, "id1"),
                                 ([2], "default", None, None, False, "id2"),
                                 (["direct"], "default", None, 5, True, None)]
    messages = [m for m, _ in collector.logs()]
    assert messages[1:] == ["activated", "direct ids [5]", "acked id1", "failed id2", "deactivated"]
    assert collector.logs()[4][1] == 3  # warning
    assert collector.threads == {threading.get_ident()}
