"""Per-task log files, as Heron has them: one file per component task, so a failing
task's traceback is found by name instead of in a shared worker log.

Honours pystorm's keys: ``pystorm.log.path`` (directory), ``pystorm.log.file`` (name
template with topology_name, component_name, task_id, pid), ``pystorm.log.level``,
``pystorm.log.format``, ``pystorm.log.max_bytes``, ``pystorm.log.backup_count``;
``topology.debug`` forces DEBUG. Task loggers do not propagate, so component output
never lands on the engine's console.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

from engine.config.execution import debug

_LEVELS = {
    "critical": logging.CRITICAL, "error": logging.ERROR, "warning": logging.WARNING,
    "warn": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG, "trace": 5,
}
DEFAULT_FILE = "{topology_name}_{component_name}_{task_id}.log"
DEFAULT_FORMAT = "%(asctime)s - %(name)s - %(levelname)s - %(message)s"


def task_logger(conf: Mapping[str, Any], log_dir: Path, topology: str, component: str,
                task: int) -> logging.Logger:
    directory = Path(conf.get("pystorm.log.path") or log_dir)
    directory.mkdir(parents=True, exist_ok=True)
    name = str(conf.get("pystorm.log.file") or DEFAULT_FILE).format(
        topology_name=topology, component_name=component, task_id=task, pid=os.getpid())
    logger = logging.getLogger(f"pystorm.component.{component}.task{task}")
    for old in list(logger.handlers):
        logger.removeHandler(old)
        old.close()
    handler = RotatingFileHandler(
        directory / name, maxBytes=int(conf.get("pystorm.log.max_bytes", 1_000_000)),
        backupCount=int(conf.get("pystorm.log.backup_count", 10)), encoding="utf-8")
    handler.setFormatter(logging.Formatter(str(conf.get("pystorm.log.format") or DEFAULT_FORMAT)))
    level = _LEVELS.get(str(conf.get("pystorm.log.level", "info")).lower(), logging.INFO)
    if debug(conf):
        level = logging.DEBUG
    logger.setLevel(level)
    logger.addHandler(handler)
    logger.propagate = False
    return logger


def close_logger(logger: logging.Logger) -> None:
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
