"""How many tuples per second one instance of a bolt can execute: its observed capacity.

Utilisation (for over-provisioning) is a component's execute rate divided by what its
instances can do, so it needs a capacity per instance. Two observations give one:

1. **Saturated rate** (preferred). While a component causes backpressure it is the
   bottleneck, so each instance executes as fast as it can: its mean execute rate over
   such a window *is* its capacity. This is the model Heron's scale-up formula itself
   rests on. The latest such observation replaces older ones, because capacity changes
   with the code, the data and the machine.
2. **Execute latency** (fallback, when the component was never seen saturated, e.g. it
   was submitted with too many instances, or the Health Manager just restarted):
   ``1000 / mean execute ms``. It ignores the per-tuple work outside ``execute``
   (deserializing, queueing), so it overestimates; the scale-down headroom absorbs it.

With neither, capacity is unknown and no over-provisioning is ever diagnosed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass
class CapacityEstimates:
    """Saturated capacities per component (tuples/s per instance), kept across ticks and
    exportable so that a restarted Health Manager keeps them."""

    saturated: dict[str, float] = field(default_factory=dict)

    def observe_saturated(self, component: str, rate_per_instance: float) -> None:
        """Record the per-instance rate of a component seen causing backpressure."""
        if rate_per_instance > 0:
            self.saturated[component] = rate_per_instance

    def per_instance(self, component: str, latency_ms: float | None = None) -> float | None:
        """Tuples/s one instance can execute, or None when nothing tells."""
        if component in self.saturated:
            return self.saturated[component]
        if latency_ms is not None and latency_ms > 0:
            return 1000.0 / latency_ms
        return None

    def to_json(self) -> dict[str, float]:
        return dict(self.saturated)

    @classmethod
    def from_json(cls, data: Mapping[str, float]) -> CapacityEstimates:
        return cls({str(k): float(v) for k, v in data.items()})
