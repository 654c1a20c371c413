"""Metric names the Health Manager reads, and the time series it reads them into.

Names are Heron's, so that a Heron user reading ``heron health`` or the metrics recognises
them. Per-instance metrics published by a Stream Manager carry the instance id inside
their name; they are written here as templates with an ``{instance}`` placeholder, which
is also the form :class:`~engine.healthmgr.source.MetricsSource` takes.

What the engine must publish (see ``docs/health-manager.md``):

* ``__time_spent_back_pressure_by_compid/<instance>``: by the Stream Manager of the
  instance, the milliseconds it has spent in backpressure *because of that instance*
  (its queue went over the high watermark), cumulative since the Stream Manager started
  (a counter, as the engine's other ``-ms`` metrics are). The sensor turns it into
  milliseconds of backpressure per second, capped at 1000 as Heron's sensor caps it.
* ``__connection_buffer_by_instanceid/<instance>/bytes``: by the same Stream Manager, the
  bytes waiting to be delivered to the instance now (a gauge): Heron's "wait queue".
* ``__execute-count``: by the instance, tuples executed since it started (a counter;
  Heron reads ``__execute-count/default``, the engine counts all streams together).
* ``__execute-latency``: by the instance, the mean milliseconds per execute (a gauge);
  used only to estimate capacity when it was never observed under backpressure.
* ``__time-spent-back-pressure-initiated-ms``: by each Stream Manager, the milliseconds
  it has held the spouts back for its own queues, whatever tripped it (bytes or the
  time watermark; a counter). Only the bytes blame an instance, so the Health Manager
  shares what no instance was blamed for among the instances with bytes waiting
  (:data:`UNBLAMED_BACK_PRESSURE`, derived by :class:`~engine.healthmgr.source.SnapshotHistory`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Stream Manager metric: ms in backpressure caused by the instance (counter, ms)
BACK_PRESSURE = "__time_spent_back_pressure_by_compid/{instance}"
#: Stream Manager metric: bytes queued for the instance (gauge, bytes)
WAIT_QUEUE = "__connection_buffer_by_instanceid/{instance}/bytes"
#: instance metric: tuples executed (counter)
EXECUTE_COUNT = "__execute-count"
#: instance metric: mean execute latency (gauge, ms)
EXECUTE_LATENCY = "__execute-latency"

#: Stream Manager metric: ms it has held its spouts back for its own queues, whether a
#: queue went over the high watermark in bytes or its oldest message waited too long
#: (counter, ms; the manager's own, not per instance)
BACK_PRESSURE_INITIATED = "__time-spent-back-pressure-initiated-ms"
#: derived by the Health Manager, not published: of a Stream Manager's backpressure that
#: no instance was blamed for (the time watermark's), this instance's share by the bytes
#: waiting for it (counter, ms, from 0 when the Health Manager first saw the instance)
UNBLAMED_BACK_PRESSURE = "healthmgr:unblamed_back_pressure/{instance}"

#: Heron's cap on backpressure per second: a second holds at most 1000 ms of it
MAX_BACK_PRESSURE_MS_PER_S = 1000.0

Sample = tuple[float, float]


def metric_name(template: str, instance: str) -> str:
    """The name a metric is published under for ``instance`` (templates without a
    placeholder, such as ``__execute-count``, are published by the instance itself)."""
    return template.format(instance=instance)


def instance_in(template: str, name: str) -> str | None:
    """The instance id in ``name`` when it is ``template`` published for some instance
    (``instance_in(WAIT_QUEUE, "__connection_buffer_by_instanceid/x/bytes") == "x"``)."""
    prefix, _, suffix = template.partition("{instance}")
    if len(name) <= len(prefix) + len(suffix) or not name.startswith(prefix) \
            or not name.endswith(suffix):
        return None
    return name[len(prefix):len(name) - len(suffix)]


def counter_increase(before: float, after: float) -> float:
    """How much a cumulative counter grew from ``before`` to ``after``; a counter that went
    down was restarted with its process, so it grew by its new value."""
    return after - before if after >= before else after


@dataclass(frozen=True)
class Series:
    """Values of one metric of one instance over a window, oldest first.

    ``spans`` is set for rates derived from counters: the seconds each value covers, so
    that the mean over the window weighs a value by its time (a missed poll makes one
    value cover twice as long, and it counts twice as much). Gauges have no spans and
    their mean is the plain mean of the samples."""

    times: tuple[float, ...]
    values: tuple[float, ...]
    spans: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if len(self.times) != len(self.values):
            raise ValueError("a series needs one time per value")
        if self.spans is not None and len(self.spans) != len(self.values):
            raise ValueError("a series needs one span per value")
        if any(b < a for a, b in zip(self.times, self.times[1:])):
            raise ValueError("a series' times must be in order")

    def __len__(self) -> int:
        return len(self.values)

    def mean(self) -> float:
        """The time-weighted mean for rates, the plain mean for gauges; 0 when empty (no
        data is not evidence of anything, and every detector also checks ``len``)."""
        if not self.values:
            return 0.0
        if self.spans is not None:
            total = sum(self.spans)
            if total > 0:
                return sum(v * s for v, s in zip(self.values, self.spans)) / total
        return sum(self.values) / len(self.values)

    def maximum(self) -> float:
        return max(self.values, default=0.0)

    def coverage(self) -> float:
        """Seconds of the window this series describes."""
        if self.spans is not None:
            return sum(self.spans)
        return self.times[-1] - self.times[0] if len(self.times) > 1 else 0.0

    def slope(self) -> float:
        """The least-squares slope per second (Heron's ``SimpleRegression`` with an
        intercept); 0 for fewer than two points or a single instant."""
        n = len(self.values)
        if n < 2:
            return 0.0
        mean_t = sum(self.times) / n
        mean_v = sum(self.values) / n
        var = sum((t - mean_t) ** 2 for t in self.times)
        if var == 0:
            return 0.0
        return sum((t - mean_t) * (v - mean_v) for t, v in zip(self.times, self.values)) / var


EMPTY = Series((), ())


def gauge_series(samples: Sequence[Sample]) -> Series:
    """Samples of a gauge as they are (non-finite values dropped)."""
    kept = [(t, v) for t, v in samples if math.isfinite(v)]
    return Series(tuple(t for t, _ in kept), tuple(v for _, v in kept))


def counter_rates(samples: Sequence[Sample], *, cap: float | None = None) -> Series:
    """Per-second rates of a cumulative counter between consecutive samples.

    Each rate is stamped with the end of its interval. A counter that went down was
    restarted with its process, so its increase over that interval is its new value (as
    the tracker reads counters). ``cap`` bounds every rate (backpressure: 1000 ms/s)."""
    times: list[float] = []
    values: list[float] = []
    spans: list[float] = []
    for (t0, v0), (t1, v1) in zip(samples, samples[1:]):
        dt = t1 - t0
        if dt <= 0 or not (math.isfinite(v0) and math.isfinite(v1)):
            continue
        increase = counter_increase(v0, v1)
        rate = increase / dt
        if cap is not None:
            rate = min(rate, cap)
        times.append(t1)
        values.append(rate)
        spans.append(dt)
    return Series(tuple(times), tuple(values), tuple(spans))


def aligned_sum(series: Iterable[Series]) -> Series:
    """The sum across instances at each time every instance has a value for.

    Series of one component come from the same snapshots, so they share timestamps;
    a time some instance lacks is dropped rather than summed short (a missing instance
    would make a component look idle)."""
    series = list(series)
    if not series:
        return EMPTY
    common = set(series[0].times)
    for s in series[1:]:
        common &= set(s.times)
    times = sorted(common)
    lookups = [dict(zip(s.times, s.values)) for s in series]
    span_lookup = (dict(zip(series[0].times, series[0].spans))
                   if series[0].spans is not None else None)
    values = tuple(sum(look[t] for look in lookups) for t in times)
    spans = tuple(span_lookup[t] for t in times) if span_lookup is not None else None
    return Series(tuple(times), values, spans)
