"""The Storm config keys the shell bridge reads, with Storm's defaults.

Kept together so the engine's documentation of defaults and the bridge
cannot drift apart silently: each function names its key and default.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["subprocess_timeout", "shellbolt_max_pending", "SUBPROCESS_TIMEOUT_KEY",
           "WORKER_TIMEOUT_KEY", "MAX_PENDING_KEY", "DEFAULT_WORKER_TIMEOUT_SECS",
           "DEFAULT_SHELLBOLT_MAX_PENDING"]

SUBPROCESS_TIMEOUT_KEY = "topology.subprocess.timeout.secs"
WORKER_TIMEOUT_KEY = "supervisor.worker.timeout.secs"
MAX_PENDING_KEY = "topology.shellbolt.max.pending"
DEFAULT_WORKER_TIMEOUT_SECS = 30
DEFAULT_SHELLBOLT_MAX_PENDING = 100


def _positive(conf: Mapping[str, Any], key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{key} must be a positive number, got {value!r}")
    return value


def subprocess_timeout(conf: Mapping[str, Any]) -> float:
    """Seconds a subprocess may stay silent: ``topology.subprocess.timeout.secs``,
    else ``supervisor.worker.timeout.secs``, else 30 (Storm's ShellBolt/ShellSpout)."""
    for key in (SUBPROCESS_TIMEOUT_KEY, WORKER_TIMEOUT_KEY):
        value = conf.get(key)
        if value is not None:
            return float(_positive(conf, key, value))
    return float(DEFAULT_WORKER_TIMEOUT_SECS)


def shellbolt_max_pending(conf: Mapping[str, Any]) -> int:
    """``topology.shellbolt.max.pending`` (default 100): tuples a shell bolt
    may have queued for its subprocess before ``execute`` blocks."""
    value = conf.get(MAX_PENDING_KEY)
    if value is None:
        return DEFAULT_SHELLBOLT_MAX_PENDING
    value = _positive(conf, MAX_PENDING_KEY, value)
    if value != int(value):
        raise ValueError(f"{MAX_PENDING_KEY} must be an integer, got {value!r}")
    return int(value)
