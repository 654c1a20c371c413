"""How executors run: a spout's idle sleep, an executor's inbox bound, a component's task
count, the number of containers, the tuple serializer's name and Storm's debug switch.
Read by the instance, the local engine's executors, the serializers and the loader's
config check, so each role uses the same default and refuses the same bad value (one
line naming the key and the value)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from engine.config.errors import ConfigError
from engine.config.keys import (
    DEBUG_KEY,
    RECEIVE_BUFFER_KEY,
    SERIALIZER_KEY,
    SPOUT_WAIT_KEY,
    STORM_DEFAULTS,
    TASKS_KEY,
    WORKERS_KEY,
)
from engine.config.values import flag, whole_at_least


def spout_wait_secs(conf: Mapping[str, Any]) -> float:
    """Seconds a spout sleeps when ``next_tuple`` emitted nothing (Storm's sleep wait
    strategy, given in milliseconds; 0 means spin)."""
    value = conf.get(SPOUT_WAIT_KEY)
    if value is None:
        value = STORM_DEFAULTS[SPOUT_WAIT_KEY]
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value < 0):
        raise ConfigError(f"{SPOUT_WAIT_KEY} must be a number of at least 0, got {value!r}")
    return float(value) / 1000.0


def receive_buffer_size(conf: Mapping[str, Any]) -> int:
    """Tuples an executor's inbox holds before its senders wait (Storm's 1024 by default)."""
    return whole_at_least(conf, RECEIVE_BUFFER_KEY, 1, STORM_DEFAULTS[RECEIVE_BUFFER_KEY])


def workers(conf: Mapping[str, Any]) -> int:
    """Containers a topology asks for (Storm's workers; 1 by default)."""
    return whole_at_least(conf, WORKERS_KEY, 1, STORM_DEFAULTS[WORKERS_KEY])


def task_count(conf: Mapping[str, Any], parallelism: int) -> int:
    """Tasks of a component: its ``topology.tasks`` when set, else one per executor
    (``parallelism``). ``conf`` is the component's own config."""
    return whole_at_least(conf, TASKS_KEY, 1, parallelism)


def debug(conf: Mapping[str, Any]) -> bool:
    """Storm's ``topology.debug``: every task logs at DEBUG (off by default)."""
    return flag(conf, DEBUG_KEY, bool(STORM_DEFAULTS[DEBUG_KEY]))


def serializer_name(conf: Mapping[str, Any]) -> str:
    """The tuple serializer a topology names (msgpack when unset or empty); which names
    exist is the serializers' own table (``engine.common.serialization``)."""
    value = conf.get(SERIALIZER_KEY)
    if value in (None, ""):
        return str(STORM_DEFAULTS[SERIALIZER_KEY])
    if not isinstance(value, str):
        raise ConfigError(f"{SERIALIZER_KEY} must be a serializer's name, got {value!r}")
    return value
