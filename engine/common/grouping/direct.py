"""Direct grouping: the emitter names the task (``emit(..., direct_task=N)``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.common.grouping.base import Grouping, GroupingError


class DirectGrouping(Grouping):
    is_direct = True

    def __init__(self, tasks: Sequence[int], component: str = "") -> None:
        super().__init__(tasks)
        self._valid = frozenset(self.tasks)
        self.component = component

    def choose(self, values: Sequence[Any], direct_task: int | None = None) -> Sequence[int]:
        if direct_task is None:
            raise GroupingError(
                f"component {self.component!r} subscribes with direct grouping: "
                "emit to this stream with direct_task=<task id>")
        if direct_task not in self._valid:
            # Storm sends nothing when the direct task is not a consumer of this component.
            return ()
        return (direct_task,)
