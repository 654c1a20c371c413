"""Backpressure: a component whose instances held their Stream Manager in backpressure."""

from __future__ import annotations

from dataclasses import dataclass

from engine.healthmgr.records import Symptom, SymptomKind
from engine.healthmgr.sensors import ComponentMetrics, Measurements

#: Heron's BackPressureDetector.noiseFilterMillis: below 20 ms of backpressure per second
#: (2% of the time) a component is not a bottleneck, only unlucky with a burst
DEFAULT_NOISE_FILTER_MS = 20.0


def instance_back_pressure(component: ComponentMetrics) -> dict[str, float]:
    """Mean ms of backpressure per second over the window, per instance with data."""
    return component.means("back_pressure")


@dataclass(frozen=True)
class BackPressureDetector:
    """A component whose instances together caused more than ``noise_filter_ms`` ms of
    backpressure per second over the window (Heron sums the instances' means). The
    symptom lists the instances that alone caused more than the filter."""

    noise_filter_ms: float = DEFAULT_NOISE_FILTER_MS

    def detect(self, measurements: Measurements) -> list[Symptom]:
        out = []
        for name, component in sorted(measurements.components.items()):
            per_instance = instance_back_pressure(component)
            total = sum(per_instance.values())
            if total > self.noise_filter_ms:
                hot = tuple(sorted(i for i, v in per_instance.items() if v > self.noise_filter_ms))
                out.append(Symptom(SymptomKind.BACK_PRESSURE, name, measurements.time, hot,
                                   {"ms_per_s": total, "by_instance": per_instance}))
        return out
