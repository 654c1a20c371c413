"""``repartition``: the same elements over a new number of partitions.

Without a function the elements are shuffled over the new partitions. With one,
``repartition_function(element, num_partitions)`` names the partition (or a list of them,
each taken modulo the number of partitions) through a Python custom grouping that runs in
each emitting task (``Grouping.custom``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from compat.storm_api.tuple import Tuple
from heronpy.api.custom_grouping import ICustomGrouping
from heronpy.api.stream import Grouping
from heronpy.streamlet.impl.elementbolt import ElementBolt, ElementStage


class RepartitionCustomGrouping(ICustomGrouping):
    """Routes each element to the partitions the user's function names."""

    def __init__(self, repartition_function: Callable[[Any, int], Any]) -> None:
        self._repartition_function = repartition_function
        self.target_tasks: list[int] = []

    def prepare(self, context: Any, component: str, stream: str,
                target_tasks: list[int]) -> None:
        self.target_tasks = sorted(target_tasks)

    def choose_tasks(self, values: Any) -> list[int]:
        count = len(self.target_tasks)
        chosen = self._repartition_function(values[0], count)
        indices = list(chosen) if isinstance(chosen, Iterable) else [chosen]
        return [self.target_tasks[int(index) % count] for index in indices]


class RepartitionBolt(ElementBolt):
    """Passes each element on (the grouping did the work)."""

    FUNCTION = None

    def on_element(self, element: Any, tup: Tuple) -> None:
        self.emit_element(element, tup)


class RepartitionStage(ElementStage):
    PREFIX, BOLT, WHAT = "repartition", RepartitionBolt, "Repartition"

    def __init__(self, num_partitions: int, repartition_function: Any, parent: Any) -> None:
        super().__init__(repartition_function, parent,
                         needs_function=repartition_function is not None)
        self.num_partitions = num_partitions  # checked by the streamlet made around it

    def _grouping(self) -> Any:
        if self._function is None:
            return Grouping.SHUFFLE
        return Grouping.custom(RepartitionCustomGrouping(self._function))
