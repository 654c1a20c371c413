"""Where sensors get raw metric samples: the :class:`MetricsSource` boundary.

The Topology Master keeps only the latest value of each metric, so a Health Manager polls
it and keeps the answers for one window (the tracker does the same for its charts).
:class:`SnapshotHistory` is that memory: the engine calls :meth:`SnapshotHistory.record`
with every poll (``values`` and ``components`` shaped as the tracker's
``MetricsSnapshot``), and sensors read it through :meth:`SnapshotHistory.fetch`. Any other
source (a metrics cache, a tracker over HTTP) only has to implement ``fetch``.

Samples are raw: counters as the cumulative values published, gauges as they are. The
sensors turn them into rates, so the source needs no knowledge of metric kinds. One
metric is derived as polls arrive, because it needs a Stream Manager's metrics at two
consecutive polls, which are summed away afterwards: ``UNBLAMED_BACK_PRESSURE``, each
instance's share of its Stream Manager's backpressure that no instance was blamed for
(engine/healthmgr/blame.py); it reads as a counter like the rest.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from engine.healthmgr.blame import unblamed_shares
from engine.healthmgr.metrics import UNBLAMED_BACK_PRESSURE, Sample, metric_name


class MetricsSource(Protocol):
    """Samples of one metric for every instance of one component over a window."""

    def fetch(self, component: str, metric: str, start: float,
              end: float) -> Mapping[str, Sequence[Sample]]:
        """``{instance id: [(time, value), ...]}`` oldest first, for samples taken in
        ``[start, end]``. ``metric`` is a template from :mod:`engine.healthmgr.metrics`
        (``{instance}`` replaced by each instance id). Instances without a sample are
        left out; times are on the Health Manager's clock."""
        ...


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    try:
        parsed = float(str(value))
    except ValueError:
        return None
    return parsed if math.isfinite(parsed) else None


@dataclass
class _Snapshot:
    time: float
    #: instance id -> {metric: value}: what each instance published itself
    own: dict[str, dict[str, float]]
    #: metric -> value summed over system processes (Stream Managers...), whose
    #: per-instance metrics name the instance
    shared: dict[str, float]
    #: instance id -> component, for the user's components only
    components: dict[str, str] = field(default_factory=dict)


class SnapshotHistory:
    """Polls of the Topology Master's metrics kept for ``keep_secs``; a :class:`MetricsSource`.

    A metric is looked up first among the instance's own metrics, then among those of
    system processes (components named ``__...``, such as ``__stmgr__``), summed over
    them: after an update an instance's old and new Stream Manager may both report it."""

    def __init__(self, keep_secs: float) -> None:
        if keep_secs <= 0:
            raise ValueError("keep_secs must be positive")
        self.keep_secs = keep_secs
        self._snapshots: list[_Snapshot] = []
        #: system process id -> (time, metrics) of its latest poll: the "before" of the
        #: next poll's unblamed shares
        self._system_before: dict[str, tuple[float, dict[str, float]]] = {}
        #: instance id -> cumulative ms of unblamed backpressure shared to it
        self._unblamed_ms: dict[str, float] = {}

    def __len__(self) -> int:
        return len(self._snapshots)

    @property
    def last_time(self) -> float | None:
        """The time of the newest poll kept (None when empty): a poller stamps its next
        poll no earlier, since :meth:`record` refuses going back in time."""
        return self._snapshots[-1].time if self._snapshots else None

    def record(self, time: float, values: Mapping[str, Mapping[str, object]],
               components: Mapping[str, str]) -> None:
        """Keep one poll: ``values`` maps a process id (instance or Stream Manager) to its
        metrics, ``components`` maps the same ids to their component. Values that are not
        numbers are ignored. Polls older than ``keep_secs`` before ``time`` are dropped."""
        if self._snapshots and time < self._snapshots[-1].time:
            raise ValueError(f"snapshot at {time} is older than the last one "
                             f"({self._snapshots[-1].time})")
        own: dict[str, dict[str, float]] = {}
        shared: dict[str, float] = {}
        user_components: dict[str, str] = {}
        unblamed_of: set[str] = set()
        for source, metrics in values.items():
            component = components.get(source, "")
            parsed = {name: n for name, v in metrics.items() if (n := _number(v)) is not None}
            if component.startswith("__"):
                for name, n in parsed.items():
                    shared[name] = shared.get(name, 0.0) + n
                unblamed_of |= self._share_unblamed(source, time, parsed)
            else:
                own[source] = parsed
                user_components[source] = component
        for instance in unblamed_of:
            shared[metric_name(UNBLAMED_BACK_PRESSURE, instance)] = self._unblamed_ms[instance]
        self._snapshots.append(_Snapshot(time, own, shared, user_components))
        horizon = time - self.keep_secs
        cut = bisect.bisect_left([s.time for s in self._snapshots], horizon)
        del self._snapshots[:cut]

    def _share_unblamed(self, process: str, time: float,
                        metrics: dict[str, float]) -> set[str]:
        """Add the unblamed backpressure of system process ``process`` since its previous
        poll to its local instances' counters; the instances it publishes metrics for."""
        previous = self._system_before.get(process)
        self._system_before[process] = (time, metrics)
        shares = unblamed_shares(previous[1] if previous else {}, metrics,
                                 time - previous[0] if previous else 0.0)
        for instance, ms in shares.items():
            self._unblamed_ms[instance] = self._unblamed_ms.get(instance, 0.0) + ms
        return set(shares)

    def fetch(self, component: str, metric: str, start: float,
              end: float) -> dict[str, list[Sample]]:
        out: dict[str, list[Sample]] = {}
        for snap in self._snapshots:
            if not start <= snap.time <= end:
                continue
            for instance, owner in snap.components.items():
                if owner != component:
                    continue
                name = metric_name(metric, instance)
                value = snap.own.get(instance, {}).get(name)
                if value is None:
                    value = snap.shared.get(name)
                if value is not None:
                    out.setdefault(instance, []).append((snap.time, value))
        return out
