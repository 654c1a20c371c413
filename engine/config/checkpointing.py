"""How an EFFECTIVELY_ONCE topology checkpoints: interval, timeout, alignment buffer,
storage, retention and savepoints. Read by the Topology Master's checkpoint controller,
the Stream Manager, the instance and the submitter (docs/stateful.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.config.errors import ConfigError
from engine.config.keys import (
    ALIGNMENT_BUFFER_KEY,
    CHECKPOINT_INTERVAL_KEY,
    CHECKPOINT_TIMEOUT_KEY,
    FROM_SAVEPOINT_KEY,
    RETENTION_KEY,
    SAVEPOINTS_KEY,
    START_CLEAN_KEY,
    STORAGE_CLASS_KEY,
    STORAGE_ROOT_KEY,
)
from engine.config.values import path_or_none, positive


@dataclass(frozen=True)
class Checkpointing:
    """How an EFFECTIVELY_ONCE topology checkpoints (docs/stateful.md)."""

    interval_secs: float = 5.0
    start_clean: bool = False
    timeout_secs: float = 30.0
    buffer_bytes: int = 100 * 1024 * 1024
    storage: str = "localfs"
    #: None: the engine's default place (the topology's own state tree)
    root: str | None = None
    retained: int = 5
    #: where ``heron savepoint`` writes (None: savepoints are not available)
    savepoints: str | None = None
    #: the savepoint directory this topology starts from (None: none)
    from_savepoint: str | None = None


def checkpointing(conf: Mapping[str, Any]) -> Checkpointing:
    """The checkpoint settings of a topology's config, checked (a bad value names its key)."""
    clean = conf.get(START_CLEAN_KEY, False)
    if isinstance(clean, str):
        if clean.lower() not in ("true", "false"):
            raise ConfigError(f"{START_CLEAN_KEY} must be true or false, got {clean!r}")
        clean = clean.lower() == "true"
    elif not isinstance(clean, bool):
        raise ConfigError(f"{START_CLEAN_KEY} must be true or false, got {clean!r}")
    storage = str(conf.get(STORAGE_CLASS_KEY) or "localfs")
    if storage.rsplit(".", 1)[-1] in ("LocalFileSystemStorage", "localfs"):
        storage = "localfs"
    else:
        raise ConfigError(f"{STORAGE_CLASS_KEY}: {storage!r} is not a state storage this engine "
                          "has (localfs: a directory, shared by every node on a cluster)")
    root = conf.get(STORAGE_ROOT_KEY)
    if root is not None and not isinstance(root, str):
        raise ConfigError(f"{STORAGE_ROOT_KEY} must be a directory path, got {root!r}")
    return Checkpointing(
        interval_secs=positive(conf, CHECKPOINT_INTERVAL_KEY, Checkpointing.interval_secs),
        start_clean=clean,
        timeout_secs=positive(conf, CHECKPOINT_TIMEOUT_KEY, Checkpointing.timeout_secs),
        buffer_bytes=int(positive(conf, ALIGNMENT_BUFFER_KEY, 100) * 1024 * 1024),
        storage=storage, root=root,
        savepoints=path_or_none(conf, SAVEPOINTS_KEY),
        from_savepoint=path_or_none(conf, FROM_SAVEPOINT_KEY),
        retained=max(1, int(positive(conf, RETENTION_KEY, Checkpointing.retained))))
