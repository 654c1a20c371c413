"""All grouping: every task of the consumer gets a copy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.common.grouping.base import Grouping


class AllGrouping(Grouping):
    def choose(self, values: Sequence[Any], direct_task: int | None = None) -> Sequence[int]:
        return self.tasks
