"""When an instance sends its open batch of tuples: after a time, a size in bytes or a
number of rows, whichever comes first (Heron's ``heron.instance.emit.batch.*`` keys). Read
by the instance and the loader's config check; what the bounds mean for each hop is
engine.common.network.inflight, and docs/decisions.md ("In-flight bounds") has the figures."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.config.errors import ConfigError
from engine.config.keys import (
    BATCH_BYTES_KEY,
    BATCH_ROWS_KEY,
    BATCH_TIME_KEY,
    OLD_BATCH_BYTES_KEY,
)

__all__ = ["BATCH_TIME_KEY", "BATCH_BYTES_KEY", "BATCH_ROWS_KEY", "OLD_BATCH_BYTES_KEY",
           "DEFAULT_BATCH_TIME_MS", "DEFAULT_BATCH_BYTES", "DEFAULT_BATCH_ROWS",
           "InflightConfigError", "Batching", "batching"]

#: the network's logger: the renamed key's warning is about the data path's settings
log = logging.getLogger("heron.network")

#: Heron's default is 16 ms for its Java instances; a Python instance's batches fill
#: more slowly, and 5 ms keeps a word's wait per hop well under the latency goal
DEFAULT_BATCH_TIME_MS = 5.0
#: Heron's default: a few thousand words, enough that per-message costs vanish
DEFAULT_BATCH_BYTES = 32 * 1024
DEFAULT_BATCH_ROWS = 1024


class InflightConfigError(ConfigError):
    """A batching key with a value the engine cannot use."""


@dataclass(frozen=True)
class Batching:
    """When an instance sends its open batch."""

    rows: int
    bytes: int
    secs: float


def batching(config: Mapping[str, Any]) -> Batching:
    """The batching settings of a topology's config, checked (a bad value names its key)."""
    nbytes_key = BATCH_BYTES_KEY
    if BATCH_BYTES_KEY not in config and OLD_BATCH_BYTES_KEY in config:
        log.warning("%s is now %s (Heron's name); please rename it", OLD_BATCH_BYTES_KEY,
                    BATCH_BYTES_KEY)
        nbytes_key = OLD_BATCH_BYTES_KEY
    rows = _positive(config, BATCH_ROWS_KEY, DEFAULT_BATCH_ROWS, integer=True)
    nbytes = _positive(config, nbytes_key, DEFAULT_BATCH_BYTES, integer=True)
    millis = _positive(config, BATCH_TIME_KEY, DEFAULT_BATCH_TIME_MS, integer=False)
    return Batching(rows=int(rows), bytes=int(nbytes), secs=float(millis) / 1000.0)


def _positive(config: Mapping[str, Any], key: str, default: float, *, integer: bool) -> float:
    value = config.get(key, default)
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value <= 0:
        what = "a positive integer" if integer else "a positive number"
        raise InflightConfigError(f"topology config {key} must be {what}, got {value!r}")
    return value
