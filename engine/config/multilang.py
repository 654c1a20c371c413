"""What Storm's multi-lang bridge (ShellSpout, ShellBolt) reads: how long a subprocess may
stay silent and how many tuples a shell bolt may queue for it. Read by the shell hosts on
both engines and by the loader's config check, with Storm's defaults from ``keys``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.config.keys import (
    SHELLBOLT_MAX_PENDING_KEY,
    STORM_DEFAULTS,
    SUBPROCESS_TIMEOUT_KEY,
    WORKER_TIMEOUT_KEY,
)
from engine.config.values import positive, whole_at_least


def subprocess_timeout(conf: Mapping[str, Any]) -> float:
    """Seconds a subprocess may stay silent: ``topology.subprocess.timeout.secs``,
    else ``supervisor.worker.timeout.secs``, else 30 (Storm's ShellBolt/ShellSpout)."""
    default = float(STORM_DEFAULTS[WORKER_TIMEOUT_KEY])
    for key in (SUBPROCESS_TIMEOUT_KEY, WORKER_TIMEOUT_KEY):
        if conf.get(key) is not None:
            return positive(conf, key, default)
    return default


def shellbolt_max_pending(conf: Mapping[str, Any]) -> int:
    """``topology.shellbolt.max.pending`` (default 100): tuples a shell bolt
    may have queued for its subprocess before ``execute`` blocks."""
    return whole_at_least(conf, SHELLBOLT_MAX_PENDING_KEY, 1,
                          STORM_DEFAULTS[SHELLBOLT_MAX_PENDING_KEY])
