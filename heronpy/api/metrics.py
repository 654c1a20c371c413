"""heronpy's user metrics: counters, reduced (mean) and assignable metrics.

A metric registered with ``context.register_metric(name, metric, time_bucket_in_sec)``
is read with ``get_value_and_reset()`` once per bucket and reported as the instance
metric ``user/<name>`` (a dict value as ``user/<name>/<key>``, as Heron's Metrics
Manager flattens it), which ``heron metrics`` and Prometheus show.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any


class IMetric:
    """Interface for Heron Metric."""

    @abstractmethod
    def get_value_and_reset(self) -> Any:
        """Returns the current value and reset."""


class CountMetric(IMetric):
    """Counter for a single value."""

    def __init__(self) -> None:
        self.value = 0

    def incr(self, to_add: int = 1) -> None:
        """Increments the value by ``to_add``."""
        self.value += to_add

    def get_value_and_reset(self) -> int:
        ret = self.value
        self.value = 0
        return ret


class MultiCountMetric(IMetric):
    """A counter per key."""

    def __init__(self) -> None:
        self.value: dict[Any, CountMetric] = {}

    def add_key(self, key: Any) -> None:
        """Registers a new key (reported as 0 until incremented)."""
        self.incr(key, to_add=0)

    def incr(self, key: Any, to_add: int = 1) -> None:
        """Increments the value of a given key by ``to_add``."""
        if key not in self.value:
            self.value[key] = CountMetric()
        self.value[key].incr(to_add)

    def get_value_and_reset(self) -> dict[Any, int]:
        return {key: value.get_value_and_reset() for key, value in list(self.value.items())}


class IReducer:
    """Interface for Reducer."""

    @abstractmethod
    def init(self) -> None:
        """Called when this reducer is initialized/reinitialized."""

    @abstractmethod
    def reduce(self, value: Any) -> None:
        """Called to reduce the value."""

    @abstractmethod
    def extract(self) -> Any:
        """Called to extract the current value."""


class MeanReducer(IReducer):
    """The mean of the values of a bucket (None for a bucket with none)."""

    def init(self) -> None:
        self.sum = 0.0
        self.count = 0

    def reduce(self, value: Any) -> None:
        self.sum += float(value)
        self.count += 1

    def extract(self) -> float | None:
        if self.count > 0:
            return float(self.sum) / self.count
        return None


class ReducedMetric(IMetric):
    """Values reduced by an ``IReducer`` class over a bucket."""

    def __init__(self, reducer_cls: type) -> None:
        self.reducer = reducer_cls()
        self.reducer.init()

    def update(self, value: Any) -> None:
        """Updates a value and apply reduction."""
        self.reducer.reduce(value)

    def get_value_and_reset(self) -> Any:
        value = self.reducer.extract()
        self.reducer.init()
        return value


class MultiReducedMetric(IMetric):
    """A ``ReducedMetric`` per key."""

    def __init__(self, reducer: type) -> None:
        self.value: dict[Any, ReducedMetric] = {}
        self.reducer = reducer

    def update(self, key: Any, value: Any) -> None:
        """Updates a value of a given key and apply reduction."""
        if key not in self.value:
            self.value[key] = ReducedMetric(self.reducer)
        self.value[key].update(value)

    def add_key(self, key: Any) -> None:
        """Adds a new key to this metric."""
        if key not in self.value:
            self.value[key] = ReducedMetric(self.reducer)

    def get_value_and_reset(self) -> dict[Any, Any]:
        return {key: value.get_value_and_reset() for key, value in list(self.value.items())}


class AssignableMetrics(IMetric):
    """A gauge: the last value assigned (not reset)."""

    def __init__(self, init_val: Any) -> None:
        self.value = init_val

    def update(self, value: Any) -> None:
        self.value = value

    def get_value_and_reset(self) -> Any:
        return self.value


class MultiAssignableMetrics(IMetric):
    """A gauge per key."""

    def __init__(self) -> None:
        self.map: dict[Any, AssignableMetrics] = {}

    def update(self, key: Any, value: Any) -> None:
        if key not in self.map:
            self.map[key] = AssignableMetrics(value)
        else:
            self.map[key].update(value)

    def get_value_and_reset(self) -> dict[Any, Any]:
        return {key: metric.get_value_and_reset() for key, metric in self.map.items()}


MeanReducedMetric: Callable[[], ReducedMetric] = lambda: ReducedMetric(MeanReducer)  # noqa: E731
MultiMeanReducedMetric: Callable[[], MultiReducedMetric] = (  # noqa: E731
    lambda: MultiReducedMetric(MeanReducer))
