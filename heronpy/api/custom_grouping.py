"""heronpy's custom grouping interface.

A bolt that subscribes with ``Grouping.custom(obj_or_class_path)`` gets the tasks the
object chooses; as in Heron, the object runs in every emitting task, prepared once with
that task's context (``engine.common.grouping.custom``).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any


class ICustomGrouping:
    """Interface for custom grouping class."""

    @abstractmethod
    def prepare(self, context: Any, component: str, stream: str, target_tasks: list[int]) -> None:
        """Told the target bolt's tasks before the first ``choose_tasks``."""

    @abstractmethod
    def choose_tasks(self, values: Any) -> list[int]:
        """The task ids (from ``target_tasks``) that receive a tuple with ``values``."""
