"""Where and how each task logs: pystorm's ``pystorm.log.*`` keys (as a streamparse
project's ``config.json`` sets them) and Storm's ``topology.debug``. Read by the task log
files of both engines, so an instance and a local-engine task honour the same settings."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.config.errors import ConfigError
from engine.config.execution import debug
from engine.config.keys import (
    LOG_BACKUP_COUNT_KEY,
    LOG_FILE_KEY,
    LOG_FORMAT_KEY,
    LOG_LEVEL_KEY,
    LOG_MAX_BYTES_KEY,
    LOG_PATH_KEY,
)
from engine.config.values import whole_at_least

#: pystorm's level names (Storm's, STORM-414), "trace" below DEBUG
LEVELS = {
    "critical": logging.CRITICAL, "error": logging.ERROR, "warning": logging.WARNING,
    "warn": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG, "trace": 5,
}
DEFAULT_FORMAT = "%(asctime)s - %(name)s - %(levelname)s - %(message)s"


@dataclass(frozen=True)
class TaskLogs:
    """A task's log settings; None where the role decides (its log directory, its name)."""

    #: ``pystorm.log.path``: the directory (None: the role's log directory)
    directory: str | None = None
    #: ``pystorm.log.file``: a name template with topology_name, component_name, task_id
    #: and pid (None: the role's own name)
    file: str | None = None
    #: ``pystorm.log.level``, DEBUG when ``topology.debug`` is on; an unknown name is INFO,
    #: as pystorm has it
    level: int = logging.INFO
    format: str = DEFAULT_FORMAT
    max_bytes: int = 1_000_000
    backup_count: int = 10


def task_logs(conf: Mapping[str, Any]) -> TaskLogs:
    """The log settings of a task's merged config (a bad size or count names its key)."""
    level = LEVELS.get(str(conf.get(LOG_LEVEL_KEY) or "info").lower(), logging.INFO)
    return TaskLogs(
        directory=_text(conf, LOG_PATH_KEY), file=_text(conf, LOG_FILE_KEY),
        level=logging.DEBUG if debug(conf) else level,
        format=_text(conf, LOG_FORMAT_KEY) or DEFAULT_FORMAT,
        max_bytes=whole_at_least(conf, LOG_MAX_BYTES_KEY, 0, TaskLogs.max_bytes),
        backup_count=whole_at_least(conf, LOG_BACKUP_COUNT_KEY, 0, TaskLogs.backup_count))


def _text(conf: Mapping[str, Any], key: str) -> str | None:
    value = conf.get(key)
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a string, got {value!r}")
    return value
