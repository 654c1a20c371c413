"""heronpy's custom grouping interface.

The engines do not run Python custom groupings yet: a topology that subscribes with
``Grouping.custom(...)`` is refused when it is loaded (docs/heronpy.md, issue 40).
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
