"""Wait queues: too many bytes waiting for an instance, or their number growing."""

from __future__ import annotations

from dataclasses import dataclass

from engine.healthmgr.records import Symptom, SymptomKind
from engine.healthmgr.sensors import Measurements

#: Heron's LargeWaitQueueDetector.limit (mean bytes waiting for one instance)
DEFAULT_LARGE_LIMIT = 1000.0
#: Heron's GrowingWaitQueueDetector.limit (bytes per second of regression slope)
DEFAULT_GROWTH_LIMIT = 10.0
#: Heron's minimum points for a trend line
MIN_TREND_POINTS = 3


@dataclass(frozen=True)
class LargeWaitQueueDetector:
    """Instances whose mean wait queue over the window is above ``limit``; one symptom
    per component naming them."""

    limit: float = DEFAULT_LARGE_LIMIT

    def detect(self, measurements: Measurements) -> list[Symptom]:
        out = []
        for name, component in sorted(measurements.components.items()):
            means = component.means("wait_queue")
            large = tuple(sorted(i for i, m in means.items() if m > self.limit))
            if large:
                out.append(Symptom(SymptomKind.LARGE_WAIT_QUEUE, name, measurements.time, large,
                                   {"mean_bytes": {i: means[i] for i in large}}))
        return out


@dataclass(frozen=True)
class GrowingWaitQueueDetector:
    """A component with an instance whose wait queue grows faster than ``limit`` per
    second: the least-squares slope of its samples, from 3 samples on (Heron's rule;
    with fewer the trend is not a trend). The symptom names the growing instances."""

    limit: float = DEFAULT_GROWTH_LIMIT

    def detect(self, measurements: Measurements) -> list[Symptom]:
        out = []
        for name, component in sorted(measurements.components.items()):
            slopes = {i: s.slope() for i, s in component.series("wait_queue").items()
                      if len(s) >= MIN_TREND_POINTS}
            growing = tuple(sorted(i for i, v in slopes.items() if v > self.limit))
            if growing:
                out.append(Symptom(SymptomKind.GROWING_WAIT_QUEUE, name, measurements.time,
                                   growing, {"max_slope": max(slopes[i] for i in growing)}))
        return out
