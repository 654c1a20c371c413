"""Fields grouping: equal values of the grouping fields always reach the same task."""

from __future__ import annotations

from typing import Any, Sequence

from engine.grouping.base import Grouping
from engine.grouping.hashing import fields_key_hash


class FieldsGrouping(Grouping):
    def __init__(self, tasks: Sequence[int], field_indices: Sequence[int]) -> None:
        super().__init__(tasks)
        self.field_indices = tuple(field_indices)
        self._singles = [(t,) for t in self.tasks]

    def task_for_hash(self, key_hash: int) -> Sequence[int]:
        """Targets for a precomputed key hash (the Stream Manager routes on the hash alone)."""
        return self._singles[key_hash % len(self._singles)]

    def choose(self, values: Sequence[Any], direct_task: int | None = None) -> Sequence[int]:
        return self._singles[fields_key_hash(values, self.field_indices) % len(self._singles)]
