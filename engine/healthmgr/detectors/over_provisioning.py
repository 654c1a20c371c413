"""Over-provisioning: a bolt that stayed well under its capacity for a whole window.

Not in Heron (which never scales down). Utilisation at a sample time is the component's
total execute rate over what its instances can execute::

    utilisation(t) = sum of instance execute rates at t / (parallelism x capacity per instance)

with the capacity from :mod:`engine.healthmgr.capacity`. The symptom needs, over the
whole window: every utilisation sample below ``limit``, no sample with more than the
noise filter of backpressure, data from every instance covering at least
``min_coverage`` of the window (just after an action or a restart there is not enough
evidence yet), and a known capacity. A single instance is never over-provisioned:
there is nothing to take away.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.healthmgr.capacity import CapacityEstimates
from engine.healthmgr.detectors.backpressure import DEFAULT_NOISE_FILTER_MS
from engine.healthmgr.metrics import aligned_sum
from engine.healthmgr.records import Symptom, SymptomKind
from engine.healthmgr.sensors import ComponentMetrics, Measurements

#: below half of its capacity for a whole window, a bolt has at least one instance too
#: many even with the scale-down headroom (sized to 70%); well apart from the scale-up
#: trigger (backpressure), so the two cannot chase each other
DEFAULT_UTILISATION_LIMIT = 0.5
#: the data must describe 80% of the window: with polls every few seconds the first
#: interval of a window is never covered, and less than this is too little evidence
DEFAULT_MIN_COVERAGE = 0.8


@dataclass(frozen=True)
class OverProvisioningDetector:
    window_secs: float
    limit: float = DEFAULT_UTILISATION_LIMIT
    noise_filter_ms: float = DEFAULT_NOISE_FILTER_MS
    min_coverage: float = DEFAULT_MIN_COVERAGE

    def detect(self, measurements: Measurements,
               capacities: CapacityEstimates) -> list[Symptom]:
        out = []
        for _name, component in sorted(measurements.components.items()):
            symptom = self._check(component, capacities, measurements.time)
            if symptom is not None:
                out.append(symptom)
        return out

    def _check(self, component: ComponentMetrics, capacities: CapacityEstimates,
               now: float) -> Symptom | None:
        n = component.view.parallelism
        rates = component.series("execute_rate")
        if n < 2 or any(len(s) == 0 for s in rates.values()):
            return None
        total = aligned_sum(rates.values())
        if len(total) == 0 or total.coverage() < self.min_coverage * self.window_secs:
            return None
        pressure = component.series("back_pressure")
        if any(len(s) == 0 for s in pressure.values()):
            return None  # no evidence of the absence of backpressure
        if aligned_sum(pressure.values()).maximum() > self.noise_filter_ms:
            return None
        latencies = [s.mean() for s in component.series("execute_latency").values() if len(s)]
        latency = sum(latencies) / len(latencies) if latencies else None
        capacity = capacities.per_instance(component.name, latency)
        if capacity is None:
            return None
        peak = max(v / (n * capacity) for v in total.values)
        if peak >= self.limit:
            return None
        source = "saturated" if component.name in capacities.saturated else "latency"
        return Symptom(SymptomKind.OVER_PROVISIONING, component.name, now,
                       tuple(sorted(component.instances)),
                       {"peak_utilisation": peak, "peak_rate": total.maximum(),
                        "mean_rate": total.mean(), "capacity_per_instance": capacity,
                        "capacity_from": source, "parallelism": n})
