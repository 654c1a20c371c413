"""How many bytes of tuple batches may be in flight between a Stream Manager and each local
instance, each way (Heron's instance queue capacities, in bytes). Read by the instance, the
Stream Manager and the loader's config check; the credit mechanism that keeps the bound is
engine.common.network.credits, and docs/decisions.md ("In-flight bounds") has the figures."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.config.errors import ConfigError
from engine.config.keys import BOLT_READ_KEY, BOLT_WRITE_KEY, SPOUT_WRITE_KEY

__all__ = ["BOLT_READ_KEY", "SPOUT_WRITE_KEY", "BOLT_WRITE_KEY", "DEFAULT_BOLT_READ_BYTES",
           "DEFAULT_SPOUT_WRITE_BYTES", "DEFAULT_BOLT_WRITE_BYTES", "CreditConfigError",
           "Capacities", "capacities"]

#: two batches of the default 32 KiB (``heron.instance.emit.batch.size.bytes``), several
#: of the half batches a Stream Manager splits a spout's into: enough that a bolt rarely
#: waits for its credit to come back (a round trip through two threads and the Stream
#: Manager's loop), and tens of milliseconds of a Python word count's work (about 2 MB/s)
DEFAULT_BOLT_READ_BYTES = 64 * 1024
#: one batch: while its Stream Manager reads, a spout has one on its way as it fills the
#: next; while it does not (backpressure), only this waits
DEFAULT_SPOUT_WRITE_BYTES = 32 * 1024
#: a bolt's Stream Manager always reads it (it never stops reading bolts), so this bounds
#: only what waits while that process is short of CPU
DEFAULT_BOLT_WRITE_BYTES = 128 * 1024


class CreditConfigError(ConfigError):
    """A credit key with a value the engine cannot use; the message names the key."""


@dataclass(frozen=True)
class Capacities:
    """Bytes of tuple batches that may be in flight between a Stream Manager and an
    instance, each way."""

    bolt_read: int
    spout_write: int
    bolt_write: int

    def write(self, kind: str) -> int:
        return self.spout_write if kind == "spout" else self.bolt_write


def capacities(config: Mapping[str, Any]) -> Capacities:
    """The credit capacities of a topology's config, checked (a bad value names its key)."""
    return Capacities(bolt_read=_bytes(config, BOLT_READ_KEY, DEFAULT_BOLT_READ_BYTES),
                      spout_write=_bytes(config, SPOUT_WRITE_KEY, DEFAULT_SPOUT_WRITE_BYTES),
                      bolt_write=_bytes(config, BOLT_WRITE_KEY, DEFAULT_BOLT_WRITE_BYTES))


def _bytes(config: Mapping[str, Any], key: str, default: int) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise CreditConfigError(f"topology config {key} must be a positive integer number "
                                f"of bytes, got {value!r}")
    return value
