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
    #: Heron's EFFECTIVELY_ONCE: acking off, state checkpointed and rolled back together
    effectively_once: bool = False

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
            ackers = 0  # as in Heron: checkpoints, not tuple trees, make it reliable
        else:
            raise ConfigError(
                f"{RELIABILITY_MODE_KEY} must be ATMOST_ONCE, ATLEAST_ONCE or "
                f"EFFECTIVELY_ONCE, got {mode!r}")
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
        effectively_once=mode == "EFFECTIVELY_ONCE",
    )


#: Heron's keys for stateful topologies, and our defaults
CHECKPOINT_INTERVAL_KEY = "topology.stateful.checkpoint.interval.seconds"
START_CLEAN_KEY = "topology.stateful.start.clean"
#: beyond Heron: a checkpoint not complete this long after it started is abandoned
CHECKPOINT_TIMEOUT_KEY = "topology.stateful.checkpoint.timeout.secs"
#: Heron's bound on what a Stream Manager holds back while it aligns markers
ALIGNMENT_BUFFER_KEY = "heron.streammgr.stateful.buffer.size.mb"
STORAGE_CLASS_KEY = "heron.statefulstorage.classname"
STORAGE_ROOT_KEY = "heron.statefulstorage.localfs.root.path"
RETENTION_KEY = "heron.statefulstorage.localfs.max.checkpoints"
#: ours: where savepoints go (set by the submitter: beside the checkpoint root on a
#: cluster, under the user's heron home on one machine)
SAVEPOINTS_KEY = "heron.statefulstorage.savepoints.path"
#: ours: the savepoint a topology starts from (``heron submit --from-savepoint``)
FROM_SAVEPOINT_KEY = "heron.stateful.from.savepoint"


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


def _positive(conf: Mapping[str, Any], key: str, default: float) -> float:
    value = conf.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{key} must be a positive number, got {value!r}")
    return float(value)


def _path_or_none(conf: Mapping[str, Any], key: str) -> str | None:
    value = conf.get(key)
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a directory path, got {value!r}")
    return value


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
        interval_secs=_positive(conf, CHECKPOINT_INTERVAL_KEY, Checkpointing.interval_secs),
        start_clean=clean,
        timeout_secs=_positive(conf, CHECKPOINT_TIMEOUT_KEY, Checkpointing.timeout_secs),
        buffer_bytes=int(_positive(conf, ALIGNMENT_BUFFER_KEY, 100) * 1024 * 1024),
        storage=storage, root=root,
        savepoints=_path_or_none(conf, SAVEPOINTS_KEY),
        from_savepoint=_path_or_none(conf, FROM_SAVEPOINT_KEY),
        retained=max(1, int(_positive(conf, RETENTION_KEY, Checkpointing.retained))))


def tick_frequency(conf: Mapping[str, Any]) -> float | None:
    """Seconds between tick tuples for a component (its own conf wins over the topology's)."""
    value = conf.get("topology.tick.tuple.freq.secs")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"topology.tick.tuple.freq.secs must be a positive number, got {value!r}")
    return value
