"""Fields grouping: equal values of the grouping fields always reach the same task."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.common.grouping.base import Grouping
from engine.common.grouping.hashing import fields_key_hash
from engine.common.grouping.key_groups import routing_table


class FieldsGrouping(Grouping):
    """With ``key_groups`` (EFFECTIVELY_ONCE), a key goes to the owner of its key group
    (engine.common.grouping.key_groups), so it reaches the task whose keyed state holds it at
    any parallelism; otherwise to ``tasks[hash % n]``, as Storm's."""

    def __init__(self, tasks: Sequence[int], field_indices: Sequence[int],
                 key_groups: int | None = None) -> None:
        super().__init__(tasks)
        self.field_indices = tuple(field_indices)
        if key_groups:
            self._singles = [(t,) for t in routing_table(self.tasks, key_groups)]
        else:
            self._singles = [(t,) for t in self.tasks]

    def task_for_hash(self, key_hash: int) -> Sequence[int]:
        """Targets for a precomputed key hash (the Stream Manager routes on the hash alone)."""
        return self._singles[key_hash % len(self._singles)]

    def choose(self, values: Sequence[Any], direct_task: int | None = None) -> Sequence[int]:
        return self._singles[fields_key_hash(values, self.field_indices) % len(self._singles)]
