"""How a topology treats tuples emitted with an id: ackers, timeouts, spout pending,
tick tuples. Read by the Stream Manager, the Topology Master, the instance and the
local engine; parsed here once so they all agree."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.config.errors import ConfigError
from engine.config.keys import (
    ACKERS_KEY,
    MAX_SPOUT_PENDING_KEY,
    MESSAGE_TIMEOUT_KEY,
    RELIABILITY_MODE_KEY,
    STORM_DEFAULTS,
    TICK_FREQUENCY_KEY,
    TIMEOUTS_ENABLED_KEY,
)
from engine.config.values import flag, non_negative_or_none


@dataclass(frozen=True)
class Reliability:
    """How a topology treats tuples emitted with an id."""

    #: Number of acker tasks; 0 means every tracked emit is acked at once.
    ackers: int
    message_timeout_secs: float
    max_spout_pending: int | None
    timeouts_enabled: bool
    #: Heron's EFFECTIVELY_ONCE: acking off, state checkpointed and rolled back together
    effectively_once: bool = False

    @property
    def acking(self) -> bool:
        return self.ackers > 0


def reliability(conf: Mapping[str, Any]) -> Reliability:
    """Resolve Storm's and Heron's reliability keys into one answer.

    Heron's ``topology.reliability.mode`` wins when given: ATMOST_ONCE means no
    ackers, ATLEAST_ONCE at least one. Otherwise Storm's ``topology.acker.executors``
    decides, with ``None`` meaning one acker, as ``sparse run`` does.
    """
    mode = conf.get(RELIABILITY_MODE_KEY)
    ackers_value = non_negative_or_none(conf, ACKERS_KEY)
    if mode is not None:
        mode = str(mode).upper()
        if mode == "ATMOST_ONCE":
            ackers = 0
        elif mode == "ATLEAST_ONCE":
            ackers = max(1, ackers_value or 1)
        elif mode == "EFFECTIVELY_ONCE":
            ackers = 0  # as in Heron: checkpoints, not tuple trees, make it reliable
        else:
            raise ConfigError(
                f"{RELIABILITY_MODE_KEY} must be ATMOST_ONCE, ATLEAST_ONCE or "
                f"EFFECTIVELY_ONCE, got {mode!r}")
    else:
        ackers = 1 if ackers_value is None else ackers_value
    timeout = conf.get(MESSAGE_TIMEOUT_KEY, STORM_DEFAULTS[MESSAGE_TIMEOUT_KEY])
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ConfigError(f"{MESSAGE_TIMEOUT_KEY} must be a positive number, got {timeout!r}")
    return Reliability(
        ackers=ackers,
        message_timeout_secs=float(timeout),
        max_spout_pending=non_negative_or_none(conf, MAX_SPOUT_PENDING_KEY) or None,
        timeouts_enabled=flag(conf, TIMEOUTS_ENABLED_KEY, True),
        effectively_once=mode == "EFFECTIVELY_ONCE",
    )


def tick_frequency(conf: Mapping[str, Any]) -> float | None:
    """Seconds between tick tuples for a component (its own conf wins over the topology's)."""
    value = conf.get(TICK_FREQUENCY_KEY)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{TICK_FREQUENCY_KEY} must be a positive number, got {value!r}")
    return value
