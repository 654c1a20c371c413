"""Skew: one instance of a component far above another on a metric (Heron's SkewDetector).

Skew means the largest per-instance mean over the window exceeds ``skew_ratio`` times the
smallest. The symptom names the instances on the high side (mean at least 90% of the
largest); ``detail["low"]`` those on the low side (at most 110% of the smallest).
A component needs two instances with data to be skewed at all."""

from __future__ import annotations

from dataclasses import dataclass

from engine.healthmgr.records import Symptom, SymptomKind
from engine.healthmgr.sensors import Measurements

#: Heron's ProcessingRateSkewDetector.skewRatio
DEFAULT_RATE_SKEW_RATIO = 1.5
#: Heron's WaitQueueSkewDetector.skewRatio
DEFAULT_WAIT_QUEUE_SKEW_RATIO = 20.0


@dataclass(frozen=True)
class SkewDetector:
    """Skew of one :class:`~engine.healthmgr.sensors.InstanceMetrics` field."""

    kind: SymptomKind
    attribute: str
    skew_ratio: float

    def detect(self, measurements: Measurements) -> list[Symptom]:
        out = []
        for name, component in sorted(measurements.components.items()):
            means = component.means(self.attribute)
            if len(means) < 2:
                continue
            high, low = max(means.values()), min(means.values())
            if high > self.skew_ratio * low:
                top = tuple(sorted(i for i, m in means.items() if m >= 0.90 * high))
                bottom = sorted(i for i, m in means.items() if m <= 1.10 * low)
                out.append(Symptom(self.kind, name, measurements.time, top,
                                   {"max_mean": high, "min_mean": low, "low": bottom}))
        return out


def processing_rate_skew_detector(skew_ratio: float = DEFAULT_RATE_SKEW_RATIO) -> SkewDetector:
    return SkewDetector(SymptomKind.PROCESSING_RATE_SKEW, "execute_rate", skew_ratio)


def wait_queue_skew_detector(skew_ratio: float = DEFAULT_WAIT_QUEUE_SKEW_RATIO) -> SkewDetector:
    return SkewDetector(SymptomKind.WAIT_QUEUE_SKEW, "wait_queue", skew_ratio)
