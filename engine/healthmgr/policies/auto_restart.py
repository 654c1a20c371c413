"""Auto-restart: restart the container of an instance that is slow while its peers are
not (Heron's ``AutoRestartBackpressureContainerPolicy``, narrowed from "any instance in
backpressure" to the slow-instance diagnosis, so a bolt that is merely too small is
scaled, not restarted)."""

from __future__ import annotations

from engine.healthmgr.capacity import CapacityEstimates
from engine.healthmgr.detectors.backpressure import BackPressureDetector
from engine.healthmgr.detectors.skew import processing_rate_skew_detector, wait_queue_skew_detector
from engine.healthmgr.diagnosers.slow_instance import SlowInstanceDiagnoser
from engine.healthmgr.policies.base import Detector, Evaluation
from engine.healthmgr.policies.config import PolicyConfig
from engine.healthmgr.records import Action
from engine.healthmgr.resolvers.restart_container import RestartContainerResolver
from engine.healthmgr.sensors import (
    back_pressure_sensor,
    buffer_size_sensor,
    execute_count_sensor,
    execute_latency_sensor,
    measure,
)
from engine.healthmgr.source import MetricsSource
from engine.healthmgr.topology import TopologyView


class AutoRestartPolicy:
    def __init__(self, config: PolicyConfig) -> None:
        self.config = config
        c = config
        # execute latency tells a slow instance from a hot key's when rates are skewed
        self.sensors = [back_pressure_sensor(c.duration("BackPressureSensor")),
                        buffer_size_sensor(c.duration("BufferSizeSensor")),
                        execute_count_sensor(c.duration("ExecuteCountSensor")),
                        execute_latency_sensor(c.duration("ExecuteLatencySensor"))]
        self.detectors: list[Detector] = [BackPressureDetector(c.noise_filter_ms),
                          processing_rate_skew_detector(c.rate_skew_ratio),
                          wait_queue_skew_detector(c.wait_queue_skew_ratio)]
        self.resolver = RestartContainerResolver()

    def evaluate(self, source: MetricsSource, topology: TopologyView, now: float,
                 not_before: float | None, capacities: CapacityEstimates) -> Evaluation:
        m = measure(self.sensors, source, topology.bolts(), now, not_before)
        result = Evaluation()
        for detector in self.detectors:
            result.symptoms += detector.detect(m)
        result.diagnoses = SlowInstanceDiagnoser().diagnose(result.symptoms, m)
        for d in result.diagnoses:
            outcome = self.resolver.resolve(d, topology.components[d.component])
            if isinstance(outcome, Action):
                result.action = outcome
                break
            result.notes.append(outcome)
        return result
