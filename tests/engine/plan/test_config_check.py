"""Every runtime key a role reads is checked when the topology is loaded: ``heron submit``
and ``heron run`` refuse a value no role could use in one line naming the key and the
value (exit 2), instead of saying "submitted" and leaving the Topology Master to
crash-loop with the traceback in its log."""

from __future__ import annotations

import pytest

from engine.common.plan.config_check import check_runtime_config
from engine.common.plan.errors import InvalidConfigError

BAD_VALUES = [
    ("topology.stateful.checkpoint.interval.seconds", "abc"),
    ("topology.stateful.checkpoint.interval.seconds", 0),
    ("topology.stateful.checkpoint.interval.seconds", -3),
    ("topology.stateful.checkpoint.timeout.secs", "soon"),
    ("topology.stateful.start.clean", "maybe"),
    ("topology.stateful.key.groups", "abc"),
    ("topology.stateful.key.groups", 0),
    ("topology.reliability.mode", "EXACTLY_ONCE"),
    ("topology.message.timeout.secs", 0),
    ("topology.max.spout.pending", -1),
    ("topology.acker.executors", "two"),
    ("topology.tick.tuple.freq.secs", "often"),
    ("topology.tuple.serializer", "json5"),
    ("heron.executor.restart.backoff.initial.ms", -5),
    ("heron.statefulstorage.classname", "org.apache.heron.statefulstorage.hdfs.HDFSStorage"),
    ("heron.statefulstorage.localfs.max.checkpoints", "all"),
    ("heron.topology.healthmgr.mode", "sometimes"),
    ("topology.workers", 0),
    ("topology.executor.receive.buffer.size", 1.5),
    ("topology.enable.message.timeouts", "perhaps"),
    ("topology.subprocess.timeout.secs", 0),
    ("topology.shellbolt.max.pending", 2.5),
]


@pytest.mark.parametrize(("key", "value"), BAD_VALUES)
def test_a_value_no_role_can_use_names_its_key_and_value(key, value):
    with pytest.raises(InvalidConfigError) as caught:
        check_runtime_config({"topology.reliability.mode": "EFFECTIVELY_ONCE", key: value})
    message = str(caught.value)
    assert key in message and repr(value).strip("'") in message
    assert "\n" not in message


def test_a_components_own_config_is_checked_and_named():
    with pytest.raises(InvalidConfigError) as caught:
        check_runtime_config({}, {"count": {"topology.tick.tuple.freq.secs": -1}})
    assert "component 'count'" in str(caught.value)
    assert "topology.tick.tuple.freq.secs" in str(caught.value)


def test_good_values_and_defaults_pass():
    check_runtime_config({})
    check_runtime_config({"topology.reliability.mode": "effectively_once",
                          "topology.stateful.checkpoint.interval.seconds": 0.5,
                          "topology.stateful.key.groups": 128,
                          "topology.stateful.start.clean": "true",
                          "topology.tick.tuple.freq.secs": 2, "topology.workers": 3,
                          "heron.topology.healthmgr.mode": "disabled"},
                         {"count": {"topology.tick.tuple.freq.secs": 1}})
