"""The bridge against components that speak the protocol by hand (bash).

These pin the wire itself: the handshake and its pid file, the shapes of
tuples, ticks, heartbeats and spout commands, task-id replies when
``need_task_ids`` is absent, and that every collector call is made on the
engine's (here: the test's) thread.
"""
from __future__ import annotations

import json
import threading
import time

import pytest


@pytest.mark.timeout(30)
def test_handshake_sends_conf_pid_dir_and_context(start, collector, wait_until):
    host = start("bolt", "bash", "echo.sh", {"my.key": 5}, component="echo", task=4)
    first = json.loads(wait_until(lambda: collector.logs(), poll=host.poll)[0][0])
    assert set(first) == {"conf", "pidDir", "context"}
    assert first["conf"]["my.key"] == 5
    assert first["context"]["taskid"] == 4 and first["context"]["componentid"] == "echo"


@pytest.mark.timeout(30)
def test_tuple_and_tick_messages_have_storms_shape(start, collector, wait_until):
    host = start("bolt", "bash", "echo.sh")
    host.execute(host.make_tuple("11", "src", "default", 1, ["hello", 2]))
    host.execute(host.make_tuple("12", "__system", "__tick", -1, [5]))
    wait_until(lambda: len(collector.logs()) >= 3, poll=host.poll)
    received = [json.loads(msg) for msg, _ in collector.logs()[1:3]]
    assert received == [
        {"id": "11", "comp": "src", "stream": "default", "task": 1, "tuple": ["hello", 2]},
        {"id": "12", "comp": "__system", "stream": "__tick", "task": -1, "tuple": [5]},
    ]


@pytest.mark.timeout(30)
def test_heartbeat_is_a_system_tuple_on_the_heartbeat_stream(start, collector, wait_until):
    host = start("bolt", "bash", "echo.sh")
    message = wait_until(lambda: [json.loads(m) for m, _ in collector.logs()[1:]], poll=host.poll)[
        0
    ]
    assert message["comp"] is None and message["stream"] == "__heartbeat"
    assert message["task"] == -1 and message["tuple"] == [] and isinstance(message["id"], str)


@pytest.mark.timeout(30)
def test_bolt_emits_anchors_gets_task_ids_and_acks(start, collector, wait_until):
    host = start("bolt", "bash", "bolt.sh")
    host.execute(host.make_tuple("11", "src", "default", 1, ["hello"]))
    wait_until(lambda: collector.of("ack"), poll=host.poll)
    assert collector.calls == [
        ("log", "bash bolt ready", 1),
        ("emit", ["hello", "src"], "default", ["11"], None, True, None),
        ("log", "task ids [7,8]", 3),
        ("ack", "11"),
    ]
    assert collector.threads == {threading.get_ident()}


@pytest.mark.timeout(30)
def test_bolt_survives_idle_periods_by_answering_heartbeats(start, collector):
    host = start("bolt", "bash", "bolt.sh", {"topology.subprocess.timeout.secs": 2})
    host.poll()
    seen = host.process.last_seen
    deadline = time.monotonic() + 3.5
    while time.monotonic() < deadline:
        host.poll()
        time.sleep(0.1)
    assert host.process.last_seen > seen  # a heartbeat's sync arrived meanwhile
    host.execute(host.make_tuple("1", "src", "default", 1, ["still here"]))


@pytest.mark.timeout(30)
def test_bolt_wake_is_called_when_the_process_sends_something(start, collector):
    woken = threading.Event()
    host = start("bolt", "bash", "bolt.sh", wake=woken.set)
    woken.clear()
    host.execute(host.make_tuple("11", "src", "default", 1, ["hello"]))
    assert woken.wait(10)


@pytest.mark.timeout(30)
def test_spout_commands_are_sequential_and_end_at_sync(start, collector):
    host = start("spout", "bash", "spout.sh")
    host.activate()
    host.next_tuple()
    # Everything the command caused was handled before it returned.
    assert collector.calls == [("log", "activate", 2),
                               ("emit", [1], "default", None, None, True, "m1"),
                               ("log", "ids [7,8]", 2)]
    host.next_tuple()
    host.ack("m1")
    host.fail("m2")
    host.deactivate()
    assert collector.logs()[-3:] == [("ack m1", 2), ("fail m2", 2), ("deactivate", 2)]
    assert collector.threads == {threading.get_ident()}
    assert host.is_exhausted() is False
