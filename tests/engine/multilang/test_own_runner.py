"""Our own components through our own runner (``python -m compat.storm_api.run``),
which also pins that a command with arguments is split as a convenience."""
from __future__ import annotations

import sys

import pytest

RUNNER = f"{sys.executable} -m compat.storm_api.run"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("serializer", ["json", "msgpack"])
def test_our_bolt_runs_as_a_shell_component(start, collector, wait_until, serializer):
    host = start("bolt", RUNNER, f"-s {serializer} ours.UpperBolt", serializer=serializer)
    host.execute(host.make_tuple("5", "src", "default", 1, ["abc"]))
    wait_until(lambda: collector.of("ack"), poll=host.poll)
    assert collector.emits() == [(["ABC"], "default", ["5"], None, False, None)]
    assert collector.of("ack") == [("5",)]


@pytest.mark.timeout(30)
def test_our_spout_runs_as_a_shell_component(start, collector):
    host = start("spout", RUNNER, "ours.OneSpout")
    host.next_tuple()
    assert collector.emits() == [([1], "default", None, None, False, "one")]
