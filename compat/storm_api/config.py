"""Storm's configuration keys and defaults, as users import them.

The engine owns its runtime configuration (``engine/config/``: keys, defaults, and the
typed ``Reliability`` / ``Checkpointing`` read by every role); this module keeps the names
users already import from the Storm API, so a topology or connector that builds a config
with these keys, or asks what ``reliability(conf)`` means, is unchanged.
"""

from __future__ import annotations

from engine.config.checkpointing import Checkpointing, checkpointing
from engine.config.errors import ConfigError
from engine.config.keys import (
                                ACKERS_KEY,
                                ALIGNMENT_BUFFER_KEY,
                                CHECKPOINT_INTERVAL_KEY,
                                CHECKPOINT_TIMEOUT_KEY,
                                FROM_SAVEPOINT_KEY,
                                RELIABILITY_MODE_KEY,
                                RETENTION_KEY,
                                SAVEPOINTS_KEY,
                                START_CLEAN_KEY,
                                STORAGE_CLASS_KEY,
                                STORAGE_ROOT_KEY,
                                STORM_DEFAULTS,
                                with_defaults,
)
from engine.config.reliability import Reliability, reliability, tick_frequency

__all__ = [
    "ACKERS_KEY", "ALIGNMENT_BUFFER_KEY", "CHECKPOINT_INTERVAL_KEY", "CHECKPOINT_TIMEOUT_KEY",
    "FROM_SAVEPOINT_KEY", "RELIABILITY_MODE_KEY", "RETENTION_KEY", "SAVEPOINTS_KEY",
    "START_CLEAN_KEY", "STORAGE_CLASS_KEY", "STORAGE_ROOT_KEY", "STORM_DEFAULTS",
    "Checkpointing", "ConfigError", "Reliability", "checkpointing", "reliability",
    "tick_frequency", "with_defaults",
]
