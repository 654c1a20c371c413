"""The executors' keys (spout wait, receive buffer, tasks, workers, debug) are read in one
place: defaults are Storm's, good values come back typed, a bad value is refused in one
line naming the key and the value."""

import pytest

from engine.config.errors import ConfigError
from engine.config.execution import (
    debug,
    receive_buffer_size,
    serializer_name,
    spout_wait_secs,
    task_count,
    workers,
)
from engine.config.keys import with_defaults
from engine.config.reliability import reliability


def test_storm_defaults():
    for conf in ({}, with_defaults({})):
        assert spout_wait_secs(conf) == 0.001
        assert receive_buffer_size(conf) == 1024
        assert workers(conf) == 1
        assert debug(conf) is False
        assert task_count(conf, 3) == 3
        assert serializer_name(conf) == "msgpack"
        assert reliability(conf).timeouts_enabled is True


def test_good_values_come_back_typed():
    conf = {"topology.sleep.spout.wait.strategy.time.ms": 5,
            "topology.executor.receive.buffer.size": 64.0,
            "topology.workers": 3, "topology.debug": True, "topology.tasks": 4,
            "topology.enable.message.timeouts": False, "topology.tuple.serializer": "pickle"}
    assert spout_wait_secs(conf) == 0.005
    assert receive_buffer_size(conf) == 64 and isinstance(receive_buffer_size(conf), int)
    assert workers(conf) == 3
    assert debug(conf) is True
    assert task_count(conf, 2) == 4
    assert reliability(conf).timeouts_enabled is False
    assert serializer_name(conf) == "pickle"
    assert serializer_name({"topology.tuple.serializer": ""}) == "msgpack"
    assert spout_wait_secs({"topology.sleep.spout.wait.strategy.time.ms": 0}) == 0.0


@pytest.mark.parametrize(("read", "key", "value"), [
    (spout_wait_secs, "topology.sleep.spout.wait.strategy.time.ms", -1),
    (spout_wait_secs, "topology.sleep.spout.wait.strategy.time.ms", "1"),
    (spout_wait_secs, "topology.sleep.spout.wait.strategy.time.ms", True),
    (spout_wait_secs, "topology.sleep.spout.wait.strategy.time.ms", float("nan")),
    (receive_buffer_size, "topology.executor.receive.buffer.size", 0),
    (receive_buffer_size, "topology.executor.receive.buffer.size", 1.5),
    (receive_buffer_size, "topology.executor.receive.buffer.size", "big"),
    (workers, "topology.workers", 0),
    (workers, "topology.workers", float("inf")),
    (lambda conf: task_count(conf, 1), "topology.tasks", 0),
    (lambda conf: task_count(conf, 1), "topology.tasks", "4"),
    (debug, "topology.debug", "yes"),
    (debug, "topology.debug", 1),
    (reliability, "topology.enable.message.timeouts", "false"),
    (serializer_name, "topology.tuple.serializer", 5),
])
def test_a_bad_value_names_its_key_and_value(read, key, value):
    with pytest.raises(ConfigError) as caught:
        read({key: value})
    message = str(caught.value)
    assert key in message and repr(value) in message
    assert "\n" not in message
