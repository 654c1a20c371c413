"""Per-task log files, as Heron has them: one file per component task, so a failing
task's traceback is found by name instead of in a shared worker log.

Honours pystorm's keys: ``pystorm.log.path`` (directory), ``pystorm.log.file`` (name
template with topology_name, component_name, task_id, pid), ``pystorm.log.level``,
``pystorm.log.format``, ``pystorm.log.max_bytes``, ``pystorm.log.backup_count``;
``topology.debug`` forces DEBUG (read by ``engine.config.task_logs``). Task loggers do not
propagate, so component output never lands on the engine's console.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

from engine.config.task_logs import task_logs

DEFAULT_FILE = "{topology_name}_{component_name}_{task_id}.log"


def task_logger(conf: Mapping[str, Any], log_dir: Path, topology: str, component: str,
                task: int, default_file: str = DEFAULT_FILE) -> logging.Logger:
    """``default_file``: the name (or template) used when ``pystorm.log.file`` is unset."""
    settings = task_logs(conf)
    directory = Path(settings.directory or log_dir)
    directory.mkdir(parents=True, exist_ok=True)
    name = (settings.file or default_file).format(
        topology_name=topology, component_name=component, task_id=task, pid=os.getpid())
    logger = logging.getLogger(f"pystorm.component.{component}.task{task}")
    for old in list(logger.handlers):
        logger.removeHandler(old)
        old.close()
    handler = RotatingFileHandler(directory / name, maxBytes=settings.max_bytes,
                                  backupCount=settings.backup_count, encoding="utf-8")
    handler.setFormatter(logging.Formatter(settings.format))
    logger.setLevel(settings.level)
    logger.addHandler(handler)
    logger.propagate = False
    return logger


def close_logger(logger: logging.Logger) -> None:
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
