"""Storm's configuration keys and defaults, in one place, for both engines.

Storm's dotted keys are the configuration language (users already know them); Heron's
``topology.reliability.mode`` is accepted as an alias and wins when given. Values are
Storm's ``conf/defaults.yaml`` unless a comment says why we differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

#: Storm's defaults for the keys the engines read.
STORM_DEFAULTS: dict[str, Any] = {
    "topology.debug": False,
    "topology.workers": 1,
    # None means "one per worker" in Storm; `sparse run` forces 1, and so do we: acking
    # is on unless a user sets 0 (DESIGN, "Reliability semantics").
    "topology.acker.executors": None,
    "topology.message.timeout.secs": 30,
    "topology.max.spout.pending": None,
    "topology.enable.message.timeouts": True,
    "topology.tick.tuple.freq.secs": None,
    "topology.sleep.spout.wait.strategy.time.ms": 1,
    "topology.multilang.serializer": "org.apache.storm.multilang.JsonSerializer",
    "topology.shellbolt.max.pending": 100,
    "topology.subprocess.timeout.secs": None,
    "supervisor.worker.timeout.secs": 30,
    "topology.max.task.parallelism": None,
    "topology.tasks": None,
    "topology.environment": None,
    # Our own keys.
    "topology.tuple.serializer": "msgpack",
    # Bounded executor queues (Storm's executor receive buffer default is 1024).
    "topology.executor.receive.buffer.size": 1024,
}

RELIABILITY_MODE_KEY = "topology.reliability.mode"
ACKERS_KEY = "topology.acker.executors"


class ConfigError(ValueError):
    """A configuration value is invalid; the message names the key."""


@dataclass(frozen=True)
class Reliability:
    """How a topology treats tuples emitted with an id."""

    #: Number of acker tasks; 0 means every tracked emit is acked at once.
    ackers: int
    message_timeout_secs: float
    max_spout_pending: int | None
    timeouts_enabled: bool

    @property
    def acking(self) -> bool:
        return self.ackers > 0


def with_defaults(conf: Mapping[str, Any]) -> dict[str, Any]:
    """Storm's defaults overlaid with ``conf``."""
    merged = dict(STORM_DEFAULTS)
    merged.update(conf)
    return merged


def _positive_or_none(conf: Mapping[str, Any], key: str) -> int | None:
    value = conf.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError(f"{key} must be a non-negative number, got {value!r}")
    return int(value)


def reliability(conf: Mapping[str, Any]) -> Reliability:
    """Resolve Storm's and Heron's reliability keys into one answer.

    Heron's ``topology.reliability.mode`` wins when given: ATMOST_ONCE means no
    ackers, ATLEAST_ONCE at least one. Otherwise Storm's ``topology.acker.executors``
    decides, with ``None`` meaning one acker, as ``sparse run`` does.
    """
    mode = conf.get(RELIABILITY_MODE_KEY)
    ackers_value = _positive_or_none(conf, ACKERS_KEY)
    if mode is not None:
        mode = str(mode).upper()
        if mode == "ATMOST_ONCE":
            ackers = 0
        elif mode == "ATLEAST_ONCE":
            ackers = max(1, ackers_value or 1)
        elif mode == "EFFECTIVELY_ONCE":
            raise ConfigError(
                f"{RELIABILITY_MODE_KEY}: EFFECTIVELY_ONCE (stateful checkpoints) is not "
                "supported; use ATLEAST_ONCE or ATMOST_ONCE")
        else:
            raise ConfigError(
                f"{RELIABILITY_MODE_KEY} must be ATMOST_ONCE or ATLEAST_ONCE, got {mode!r}")
    else:
        ackers = 1 if ackers_value is None else ackers_value
    timeout = conf.get("topology.message.timeout.secs", STORM_DEFAULTS["topology.message.timeout.secs"])
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ConfigError(f"topology.message.timeout.secs must be a positive number, got {timeout!r}")
    return Reliability(
        ackers=ackers,
        message_timeout_secs=float(timeout),
        max_spout_pending=_positive_or_none(conf, "topology.max.spout.pending") or None,
        timeouts_enabled=bool(conf.get("topology.enable.message.timeouts", True)),
    )


def tick_frequency(conf: Mapping[str, Any]) -> float | None:
    """Seconds between tick tuples for a component (its own conf wins over the topology's)."""
    value = conf.get("topology.tick.tuple.freq.secs")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"topology.tick.tuple.freq.secs must be a positive number, got {value!r}")
    return value
