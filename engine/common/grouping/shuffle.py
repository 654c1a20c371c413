"""Shuffle (and none): round-robin from a random start, so load is even and stateless
peers differ."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from engine.common.grouping.base import Grouping


class ShuffleGrouping(Grouping):
    def __init__(self, tasks: Sequence[int], rng: random.Random | None = None) -> None:
        super().__init__(tasks)
        self._next = (rng or random).randrange(len(self.tasks))
        self._singles = [(t,) for t in self.tasks]

    def choose(self, values: Sequence[Any], direct_task: int | None = None) -> Sequence[int]:
        i = self._next
        self._next = i + 1 if i + 1 < len(self._singles) else 0
        return self._singles[i]
