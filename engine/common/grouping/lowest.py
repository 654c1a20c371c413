"""Global grouping (Heron's LOWEST): everything goes to the consumer's lowest task id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.common.grouping.base import Grouping


class LowestGrouping(Grouping):
    def __init__(self, tasks: Sequence[int]) -> None:
        super().__init__(tasks)
        self._target = (self.tasks[0],)

    def choose(self, values: Sequence[Any], direct_task: int | None = None) -> Sequence[int]:
        return self._target
