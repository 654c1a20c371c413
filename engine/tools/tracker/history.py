"""A ring buffer of metric snapshots per topology, and the time windows served from it.

The Topology Master keeps only the latest value of each metric, and the engine's
counters are cumulative since the process started. The tracker polls every topology's
Topology Master and keeps the snapshots for ``history_secs``; a window of the last N
seconds is the difference between the newest snapshot and the one taken N seconds
before it (or the oldest kept, when the tracker has not been watching that long: the
response says which times it really used).

Counters and gauges differ: a counter (``__emit-count``, ``__tuples-sent``,
``__time-spouts-paused-ms``...) is reported over a window as its increase, and a counter
that went down restarted with its process, so its increase is its new value. A gauge
(``__complete-latency``, ``__backpressure``, ``__buffered-bytes``, ``__active``...) is
reported as its latest value. Values that are not numbers (``__last-error``) stay text.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from engine.tmanager.client import MetricsSnapshot

#: cumulative metrics that are not named "...-count" or "...-ms"
_COUNTERS = frozenset({"__tuples-received", "__tuples-sent", "__tuples-dropped",
                       "__malformed-messages", "__trees-completed", "__trees-failed",
                       "__trees-forgotten"})
#: per-instance cumulative metrics, named ``<prefix><instance id>`` (Heron's names)
_COUNTER_PREFIXES = ("__time_spent_back_pressure_by_compid/",)

Value = int | float | str


def is_counter(name: str) -> bool:
    """Whether a metric only grows while its process lives (see the module docstring)."""
    return (name in _COUNTERS or name.endswith(("-count", "-ms"))
            or name.startswith(_COUNTER_PREFIXES))


def parse_value(text: str) -> Value:
    """A metric's text as an int, a float, or itself when it is not a number."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text


@dataclass
class Window:
    """Metric values over [start, end]: counters as increases, gauges as latest.

    ``values``: instance id -> {metric: value}; ``components``: instance id -> component.
    ``start`` is None for "all time" (values are then the cumulative counters)."""

    start: float | None
    end: float
    values: dict[str, dict[str, Value]]
    components: dict[str, str]


def window(latest: MetricsSnapshot, baseline: MetricsSnapshot | None) -> Window:
    """``latest`` relative to ``baseline`` (None: all time)."""
    values: dict[str, dict[str, Value]] = {}
    for instance, metrics in latest.values.items():
        before = baseline.values.get(instance, {}) if baseline is not None else {}
        out = values.setdefault(instance, {})
        for name, text in metrics.items():
            value = parse_value(text)
            if baseline is not None and is_counter(name) and not isinstance(value, str):
                previous = parse_value(before.get(name, "0"))
                if isinstance(previous, str) or previous > value:
                    previous = 0  # the process restarted: its counter began again at 0
                value = value - previous
            out[name] = value
    return Window(start=baseline.time if baseline is not None else None, end=latest.time,
                  values=values, components=dict(latest.components))


class TopologyHistory:
    """The kept snapshots of one topology run (one topology id), oldest first."""

    def __init__(self, topology_id: str, max_age: float, min_spacing: float) -> None:
        self.topology_id = topology_id
        self.max_age = max_age
        self.min_spacing = min_spacing
        self.snapshots: deque[MetricsSnapshot] = deque()

    def add(self, snapshot: MetricsSnapshot) -> None:
        """Keep ``snapshot``. It replaces the newest one while that is closer than
        ``min_spacing`` to the one before it (live queries between polls do not grow the
        buffer: every kept snapshot but the newest is at least that far from the next),
        and what is older than ``max_age`` is dropped."""
        if self.snapshots and snapshot.time < self.snapshots[-1].time:
            return  # a slow request answered after a newer one: nothing to add
        if len(self.snapshots) >= 2 and \
                self.snapshots[-1].time - self.snapshots[-2].time < self.min_spacing:
            self.snapshots[-1] = snapshot
        else:
            self.snapshots.append(snapshot)
        horizon = snapshot.time - self.max_age
        while len(self.snapshots) > 1 and self.snapshots[0].time < horizon:
            self.snapshots.popleft()

    def baseline(self, end: float, interval: float) -> MetricsSnapshot | None:
        """The snapshot to measure a window of ``interval`` seconds ending at ``end`` from:
        the newest taken at or before ``end - interval``, else the oldest kept."""
        if not self.snapshots:
            return None
        times = [s.time for s in self.snapshots]
        index = bisect.bisect_right(times, end - interval) - 1
        candidate = self.snapshots[max(index, 0)]
        return candidate if candidate.time < end else None

    def between(self, start: float, end: float) -> list[MetricsSnapshot]:
        return [s for s in self.snapshots if start <= s.time <= end]


class MetricsHistory:
    """Every watched topology's :class:`TopologyHistory`, safe to use from the poller
    thread and the request threads at once."""

    def __init__(self, max_age: float, min_spacing: float) -> None:
        self.max_age = max_age
        self.min_spacing = min_spacing
        self._lock = threading.Lock()
        self._topologies: dict[str, TopologyHistory] = {}

    def record(self, name: str, topology_id: str, snapshot: MetricsSnapshot) -> None:
        """Add a snapshot; a new topology id under the same name starts a new history."""
        with self._lock:
            history = self._topologies.get(name)
            if history is None or history.topology_id != topology_id:
                history = self._topologies[name] = TopologyHistory(
                    topology_id, self.max_age, self.min_spacing)
            history.add(snapshot)

    def window(self, name: str, topology_id: str, latest: MetricsSnapshot,
               interval: float) -> Window:
        """``latest`` over the last ``interval`` seconds (<= 0: all time)."""
        if interval <= 0:
            return window(latest, None)
        with self._lock:
            history = self._topologies.get(name)
            baseline = (history.baseline(latest.time, interval)
                        if history is not None and history.topology_id == topology_id else None)
        if baseline is None:
            # Nothing older than this answer: the window is empty so far.
            baseline = MetricsSnapshot(time=latest.time, values=latest.values,
                                       components=latest.components)
        return window(latest, baseline)

    def timeline(self, name: str, topology_id: str, start: float,
                 end: float) -> list[MetricsSnapshot]:
        with self._lock:
            history = self._topologies.get(name)
            if history is None or history.topology_id != topology_id:
                return []
            return history.between(start, end)

    def forget_except(self, names: Iterable[str]) -> None:
        """Drop the histories of topologies that no longer exist."""
        keep = set(names)
        with self._lock:
            for name in list(self._topologies):
                if name not in keep:
                    del self._topologies[name]
