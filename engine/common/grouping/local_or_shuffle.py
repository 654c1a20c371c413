"""Local-or-shuffle: prefer consumer tasks in the emitter's own container, else shuffle."""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from typing import Any

from engine.common.grouping.base import Grouping
from engine.common.grouping.shuffle import ShuffleGrouping


class LocalOrShuffleGrouping(Grouping):
    def __init__(self, tasks: Sequence[int], local_tasks: Collection[int] | None = None,
                 rng: random.Random | None = None) -> None:
        super().__init__(tasks)
        local = [t for t in self.tasks if local_tasks is None or t in local_tasks]
        self._shuffle = ShuffleGrouping(local or self.tasks, rng)

    def choose(self, values: Sequence[Any], direct_task: int | None = None) -> Sequence[int]:
        return self._shuffle.choose(values)
