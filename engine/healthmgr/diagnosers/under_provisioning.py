"""Under-provisioning: a component in backpressure whose instances all look alike.

Heron's rule: the one component in backpressure has neither processing-rate skew nor
wait-queue skew, so every instance is equally overwhelmed and more instances help."""

from __future__ import annotations

from collections.abc import Sequence

from engine.healthmgr.diagnosers.common import of_kind, single_back_pressure
from engine.healthmgr.records import Diagnosis, DiagnosisKind, Symptom, SymptomKind
from engine.healthmgr.sensors import Measurements


class UnderProvisioningDiagnoser:
    def diagnose(self, symptoms: Sequence[Symptom],
                 measurements: Measurements) -> list[Diagnosis]:
        bp = single_back_pressure(symptoms)
        if bp is None:
            return []
        if (bp.component in of_kind(symptoms, SymptomKind.PROCESSING_RATE_SKEW)
                or bp.component in of_kind(symptoms, SymptomKind.WAIT_QUEUE_SKEW)):
            return []
        return [Diagnosis(DiagnosisKind.UNDER_PROVISIONING, bp.component, measurements.time,
                          bp.instances, (SymptomKind.BACK_PRESSURE,),
                          {"ms_per_s": bp.detail.get("ms_per_s", 0.0)})]
