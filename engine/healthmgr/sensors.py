"""Sensors: raw samples from a :class:`MetricsSource` turned into per-instance series.

One sensor per metric, as Heron's ``BackPressureSensor``, ``BufferSizeSensor`` and
``ExecuteCountSensor``, each with its own window (``<Sensor>.duration``, default 300 s).
A window never reaches back before ``not_before``: after an action (or a pause) the
samples from before it describe a topology that no longer exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.healthmgr.metrics import (
    BACK_PRESSURE,
    EMPTY,
    EXECUTE_COUNT,
    EXECUTE_LATENCY,
    MAX_BACK_PRESSURE_MS_PER_S,
    UNBLAMED_BACK_PRESSURE,
    WAIT_QUEUE,
    Series,
    counter_rates,
    gauge_series,
)
from engine.healthmgr.source import MetricsSource
from engine.healthmgr.topology import ComponentView

#: Heron's BaseSensor.DEFAULT_METRIC_DURATION
DEFAULT_DURATION_SECS = 300.0


@dataclass(frozen=True)
class Sensor:
    """Reads one metric of a component's instances into series.

    ``name`` is Heron's sensor class name (the prefix of its ``.duration`` key);
    ``counter`` says the metric is cumulative and is read as a per-second rate.
    ``also``: more counters whose rates are added to the metric's at the same polls
    (an instance without them reads as the metric alone), before ``cap``."""

    name: str
    metric: str
    counter: bool
    duration: float = DEFAULT_DURATION_SECS
    cap: float | None = None
    also: tuple[str, ...] = ()

    def read(self, source: MetricsSource, component: ComponentView, now: float,
             not_before: float | None = None) -> dict[str, Series]:
        start = now - self.duration
        if not_before is not None:
            start = max(start, not_before)
        raw = source.fetch(component.name, self.metric, start, now)
        extra = [source.fetch(component.name, m, start, now) for m in self.also]
        out: dict[str, Series] = {}
        for instance in component.instances:
            samples = sorted(raw.get(instance, ()))
            if not self.counter:
                out[instance] = gauge_series(samples)
                continue
            rates = counter_rates(samples, cap=None if extra else self.cap)
            if extra:
                rates = _added(rates, [counter_rates(sorted(e.get(instance, ())))
                                       for e in extra], self.cap)
            out[instance] = rates
        return out


def _added(base: Series, extra: list[Series], cap: float | None) -> Series:
    """``base`` with the values of ``extra`` at the same times added, then capped; the
    times and spans stay ``base``'s (every metric comes from the same polls)."""
    lookups = [dict(zip(e.times, e.values)) for e in extra]
    values = []
    for t, v in zip(base.times, base.values):
        v += sum(look.get(t, 0.0) for look in lookups)
        values.append(min(v, cap) if cap is not None else v)
    return Series(base.times, tuple(values), base.spans)


def back_pressure_sensor(duration: float = DEFAULT_DURATION_SECS) -> Sensor:
    """ms of backpressure per second caused by each instance, capped at 1000: what its
    Stream Manager blamed it for, plus its share of what the manager blamed nobody for
    (the time watermark's pauses, engine/healthmgr/blame.py), without which a slow
    instance under byte credits can hold the spouts still for whole windows unseen."""
    return Sensor("BackPressureSensor", BACK_PRESSURE, True, duration,
                  MAX_BACK_PRESSURE_MS_PER_S, also=(UNBLAMED_BACK_PRESSURE,))


def buffer_size_sensor(duration: float = DEFAULT_DURATION_SECS) -> Sensor:
    """Bytes waiting for each instance at its Stream Manager (Heron's wait queue)."""
    return Sensor("BufferSizeSensor", WAIT_QUEUE, False, duration)


def execute_count_sensor(duration: float = DEFAULT_DURATION_SECS) -> Sensor:
    """Tuples executed per second by each instance (its processing rate)."""
    return Sensor("ExecuteCountSensor", EXECUTE_COUNT, True, duration)


def execute_latency_sensor(duration: float = DEFAULT_DURATION_SECS) -> Sensor:
    """Mean ms per execute of each instance (only a fallback for capacity)."""
    return Sensor("ExecuteLatencySensor", EXECUTE_LATENCY, False, duration)


@dataclass(frozen=True)
class InstanceMetrics:
    """The series of one instance; a sensor a policy does not use leaves its series empty."""

    back_pressure: Series = EMPTY
    wait_queue: Series = EMPTY
    execute_rate: Series = EMPTY
    execute_latency: Series = EMPTY


@dataclass(frozen=True)
class ComponentMetrics:
    """All instances of one bolt, with its view (parallelism, containers, grouping)."""

    view: ComponentView
    instances: Mapping[str, InstanceMetrics]

    @property
    def name(self) -> str:
        return self.view.name

    def series(self, attribute: str) -> dict[str, Series]:
        """``{instance: series}`` of one of :class:`InstanceMetrics`' fields."""
        return {i: getattr(m, attribute) for i, m in self.instances.items()}

    def means(self, attribute: str) -> dict[str, float]:
        """``{instance: mean over the window}`` of one field, for instances with data."""
        return {i: s.mean() for i, s in self.series(attribute).items() if len(s)}


@dataclass(frozen=True)
class Measurements:
    """What the sensors of one policy saw at ``time``, per bolt."""

    time: float
    components: Mapping[str, ComponentMetrics] = field(default_factory=dict)


#: InstanceMetrics field each sensor fills
_FIELD = {"BackPressureSensor": "back_pressure", "BufferSizeSensor": "wait_queue",
          "ExecuteCountSensor": "execute_rate", "ExecuteLatencySensor": "execute_latency"}


def measure(sensors: list[Sensor], source: MetricsSource, bolts: list[ComponentView],
            now: float, not_before: float | None = None) -> Measurements:
    """Run every sensor over every bolt."""
    components: dict[str, ComponentMetrics] = {}
    for view in bolts:
        per_instance: dict[str, dict[str, Series]] = {i: {} for i in view.instances}
        for sensor in sensors:
            for instance, series in sensor.read(source, view, now, not_before).items():
                per_instance[instance][_FIELD[sensor.name]] = series
        components[view.name] = ComponentMetrics(
            view, {i: InstanceMetrics(**fields) for i, fields in per_instance.items()})
    return Measurements(now, components)
