"""The interface every grouping implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any


class GroupingError(Exception):
    """A tuple cannot be routed as asked (e.g. a direct emit to a task of another component)."""


class Grouping(ABC):
    """Chooses destination tasks among one consuming component's tasks.

    ``tasks`` is the consumer's task ids; implementations sort them so that the
    choice depends only on the ids, never on the order they were listed in.
    """

    #: True when the grouping needs the emitter's ``direct_task``.
    is_direct = False

    def __init__(self, tasks: Sequence[int]) -> None:
        if not tasks:
            raise GroupingError("a grouping needs at least one target task")
        self.tasks: tuple[int, ...] = tuple(sorted(tasks))

    @abstractmethod
    def choose(self, values: Sequence[Any], direct_task: int | None = None) -> Sequence[int]:
        """The destination task ids for one tuple."""
