"""pystorm's task log keys and Storm's topology.debug are read in one place: pystorm's
defaults, good values typed, an unknown level INFO (as pystorm has it), a bad size or
count refused in one line naming the key and the value."""

import logging

import pytest

from engine.config.errors import ConfigError
from engine.config.keys import with_defaults
from engine.config.task_logs import DEFAULT_FORMAT, TaskLogs, task_logs


def test_defaults():
    for conf in ({}, with_defaults({})):
        assert task_logs(conf) == TaskLogs(directory=None, file=None, level=logging.INFO,
                                           format=DEFAULT_FORMAT, max_bytes=1_000_000,
                                           backup_count=10)


def test_good_values_come_back_typed():
    settings = task_logs({"pystorm.log.path": "/logs", "pystorm.log.file": "{task_id}.log",
                          "pystorm.log.level": "WARNING", "pystorm.log.format": "%(message)s",
                          "pystorm.log.max_bytes": 2048, "pystorm.log.backup_count": 0})
    assert settings == TaskLogs(directory="/logs", file="{task_id}.log", level=logging.WARNING,
                                format="%(message)s", max_bytes=2048, backup_count=0)
    assert task_logs({"pystorm.log.level": "trace"}).level == 5


def test_debug_wins_and_an_unknown_level_is_info():
    assert task_logs({"pystorm.log.level": "error", "topology.debug": True}).level \
        == logging.DEBUG
    assert task_logs({"pystorm.log.level": "chatty"}).level == logging.INFO


@pytest.mark.parametrize(("key", "value"), [
    ("pystorm.log.max_bytes", -1),
    ("pystorm.log.max_bytes", "big"),
    ("pystorm.log.backup_count", 1.5),
    ("pystorm.log.path", 7),
    ("pystorm.log.file", ["a.log"]),
    ("topology.debug", "on"),
])
def test_a_bad_value_names_its_key_and_value(key, value):
    with pytest.raises(ConfigError) as caught:
        task_logs({key: value})
    message = str(caught.value)
    assert key in message and repr(value) in message
    assert "\n" not in message
