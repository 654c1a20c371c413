"""Dynamic resource allocation: scale a bolt up when it is under-provisioned, down when it
is over-provisioned (beyond Heron, unless ``DynamicResourceAllocationPolicy.scaleDown``
is false); report data skew and slow instances, which more instances would not cure.

Heron's order of precedence: data skew, then slow instance (both reported, no action),
then under-provisioning (scale up). Over-provisioning is only considered when nothing is
in backpressure (see its diagnoser)."""

from __future__ import annotations

from engine.healthmgr.capacity import CapacityEstimates
from engine.healthmgr.detectors.backpressure import BackPressureDetector
from engine.healthmgr.detectors.over_provisioning import OverProvisioningDetector
from engine.healthmgr.detectors.skew import processing_rate_skew_detector, wait_queue_skew_detector
from engine.healthmgr.detectors.wait_queue import GrowingWaitQueueDetector, LargeWaitQueueDetector
from engine.healthmgr.diagnosers.data_skew import DataSkewDiagnoser
from engine.healthmgr.diagnosers.over_provisioning import OverProvisioningDiagnoser
from engine.healthmgr.diagnosers.slow_instance import SlowInstanceDiagnoser
from engine.healthmgr.diagnosers.under_provisioning import UnderProvisioningDiagnoser
from engine.healthmgr.policies.base import Detector, Evaluation
from engine.healthmgr.policies.config import PolicyConfig
from engine.healthmgr.records import Action, Diagnosis, DiagnosisKind, Note
from engine.healthmgr.resolvers.scale_down import ScaleDownResolver
from engine.healthmgr.resolvers.scale_up import ScaleUpResolver
from engine.healthmgr.sensors import (
    Measurements,
    Sensor,
    back_pressure_sensor,
    buffer_size_sensor,
    execute_count_sensor,
    execute_latency_sensor,
    measure,
)
from engine.healthmgr.source import MetricsSource
from engine.healthmgr.topology import TopologyView


class DynamicResourceAllocationPolicy:
    def __init__(self, config: PolicyConfig, max_parallelism: int) -> None:
        self.config = config
        c = config
        # execute latency: a capacity fallback for scaling down, and what tells a slow
        # instance from a hot key's when rates are skewed
        self.sensors: list[Sensor] = [
            back_pressure_sensor(c.duration("BackPressureSensor")),
            buffer_size_sensor(c.duration("BufferSizeSensor")),
            execute_count_sensor(c.duration("ExecuteCountSensor")),
            execute_latency_sensor(c.duration("ExecuteLatencySensor"))]
        self.back_pressure = BackPressureDetector(c.noise_filter_ms)
        self.other_detectors: list[Detector] = [LargeWaitQueueDetector(c.large_wait_queue_limit),
                                GrowingWaitQueueDetector(c.growing_wait_queue_limit),
                                processing_rate_skew_detector(c.rate_skew_ratio),
                                wait_queue_skew_detector(c.wait_queue_skew_ratio)]
        self.over_provisioning = OverProvisioningDetector(
            c.duration("ExecuteCountSensor"), c.utilisation_limit, c.noise_filter_ms,
            c.min_coverage)
        self.scale_up = ScaleUpResolver(max_parallelism)
        self.scale_down = ScaleDownResolver(c.headroom, c.allow_key_moves)

    def evaluate(self, source: MetricsSource, topology: TopologyView, now: float,
                 not_before: float | None, capacities: CapacityEstimates) -> Evaluation:
        m = measure(self.sensors, source, topology.bolts(), now, not_before)
        result = Evaluation()
        result.symptoms += self.back_pressure.detect(m)
        for detector in self.other_detectors:
            result.symptoms += detector.detect(m)
        if self.config.scale_down:
            result.symptoms += self.over_provisioning.detect(m, capacities)
        for diagnoser in (DataSkewDiagnoser(), SlowInstanceDiagnoser(),
                          UnderProvisioningDiagnoser()):
            result.diagnoses += diagnoser.diagnose(result.symptoms, m)
        if self.config.scale_down:
            result.diagnoses += OverProvisioningDiagnoser().diagnose(result.symptoms, m)
        self._learn_capacity(result, m, capacities)
        self._resolve(result, topology, now)
        return result

    @staticmethod
    def _learn_capacity(result: Evaluation, m: Measurements,
                        capacities: CapacityEstimates) -> None:
        """An under-provisioned bolt runs at capacity: remember its rate per instance."""
        for d in result.diagnoses:
            if d.kind is not DiagnosisKind.UNDER_PROVISIONING:
                continue
            rates = m.components[d.component].series("execute_rate")
            if rates and all(len(s) for s in rates.values()):
                capacities.observe_saturated(
                    d.component, sum(s.mean() for s in rates.values()) / len(rates))

    def _resolve(self, result: Evaluation, topology: TopologyView, now: float) -> None:
        by_kind: dict[DiagnosisKind, list[Diagnosis]] = {}
        for d in result.diagnoses:
            by_kind.setdefault(d.kind, []).append(d)
        for kind in (DiagnosisKind.DATA_SKEW, DiagnosisKind.SLOW_INSTANCE):
            if kind in by_kind:
                d = by_kind[kind][0]
                result.notes.append(Note(now, f"{kind.value} in {d.component} "
                                         f"({', '.join(d.instances)}): more instances would "
                                         "not help; no action", component=d.component))
                return
        candidates = (by_kind.get(DiagnosisKind.UNDER_PROVISIONING, [])
                      or by_kind.get(DiagnosisKind.OVER_PROVISIONING, []))
        for d in candidates:
            view = topology.components[d.component]
            resolver = (self.scale_up if d.kind is DiagnosisKind.UNDER_PROVISIONING
                        else self.scale_down)
            outcome = resolver.resolve(d, view)
            if isinstance(outcome, Action):
                result.action = outcome
                return
            result.notes.append(outcome)
