"""The backpressure watermarks of a topology's Stream Managers, read and checked from its
config: how many bytes (``heron.streammgr.network.backpressure.highwatermark.mb`` /
``lowwatermark.mb``) and, when set, how long (``highwatermark.ms`` / ``lowwatermark.ms``)
messages may wait for one destination before the spouts pause.

What the watermarks do is the Stream Manager's (engine.stmgr.backpressure); they are read
here, in the engine's config, because the submitter checks them before any Stream Manager
runs, as it checks the in-flight bounds (engine.common.network.inflight), so a bad value
fails the submit naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.config.errors import ConfigError
from engine.config.keys import HIGH_KEY, HIGH_MS_KEY, LOW_KEY, LOW_MS_KEY

__all__ = ["HIGH_KEY", "LOW_KEY", "HIGH_MS_KEY", "LOW_MS_KEY", "BackpressureConfigError",
           "watermarks", "wait_watermarks", "blame_wait_watermarks"]

DEFAULT_HIGH_MB = 8.0
DEFAULT_LOW_MB = 4.0
#: the high time watermark when unset: with byte credits between Stream Managers and
#: instances (engine.common.network.credits) a word waits almost only in a Stream Manager's
#: queues, where it is timed, so this bounds a flooded word's wait whatever the bolts'
#: rate (docs/decisions.md, "In-flight bounds")
DEFAULT_HIGH_MS = 40.0
#: the low time watermark, unless set: this share of the high one
DEFAULT_LOW_SHARE = 0.2


class BackpressureConfigError(ConfigError):
    """A watermark key with a value the Stream Manager cannot use; the message names it."""


def watermarks(config: Mapping[str, Any]) -> tuple[int, int]:
    """(high, low) in bytes from the topology's config, checked."""
    def read(key: str, default: float) -> float:
        value = config.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise BackpressureConfigError(f"{key} must be a positive number of megabytes, "
                                          f"got {value!r}")
        return float(value)
    high, low = read(HIGH_KEY, DEFAULT_HIGH_MB), read(LOW_KEY, DEFAULT_LOW_MB)
    if low >= high:
        raise BackpressureConfigError(f"{LOW_KEY} ({low:g}) must be below {HIGH_KEY} ({high:g})")
    return int(high * 1024 * 1024), int(low * 1024 * 1024)


def wait_watermarks(config: Mapping[str, Any]) -> tuple[float, float]:
    """(high, low) in seconds: how long the oldest queued message may wait before the
    spouts pause, checked; ``DEFAULT_HIGH_MS`` (and a fifth of it) unless set."""
    high, low = blame_wait_watermarks(config)
    if high == float("inf"):
        return DEFAULT_HIGH_MS / 1000.0, DEFAULT_HIGH_MS * DEFAULT_LOW_SHARE / 1000.0
    return high, low


def blame_wait_watermarks(config: Mapping[str, Any]) -> tuple[float, float]:
    """(high, low) in seconds by which a local instance is counted as causing
    backpressure (what the Health Manager reads), checked: infinite (bytes alone decide)
    unless ``highwatermark.ms`` is set. A default time watermark must not blame an
    instance: under load every queue is about as old, and the oldest is no bottleneck."""
    def read(key: str) -> float | None:
        value = config.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise BackpressureConfigError(f"{key} must be a positive number of milliseconds, "
                                          f"got {value!r}")
        return float(value)
    high, low = read(HIGH_MS_KEY), read(LOW_MS_KEY)
    if high is None:
        if low is not None:
            raise BackpressureConfigError(f"{LOW_MS_KEY} is set but {HIGH_MS_KEY} is not: "
                                          f"set both, or neither")
        return float("inf"), float("inf")
    if low is None:
        low = high * DEFAULT_LOW_SHARE
    if low >= high:
        raise BackpressureConfigError(f"{LOW_MS_KEY} ({low:g}) must be below {HIGH_MS_KEY} "
                                      f"({high:g})")
    return high / 1000.0, low / 1000.0
