"""Over-provisioning: a bolt with an over-provisioning symptom while no component of the
topology is in backpressure.

Backpressure anywhere pauses the spouts, which starves every other bolt: their low
utilisation then says nothing about the load they will get once it clears. Of several
over-provisioned bolts the one with the lowest peak utilisation comes first."""

from __future__ import annotations

from collections.abc import Sequence

from engine.healthmgr.diagnosers.common import of_kind
from engine.healthmgr.records import Diagnosis, DiagnosisKind, Symptom, SymptomKind
from engine.healthmgr.sensors import Measurements


class OverProvisioningDiagnoser:
    def diagnose(self, symptoms: Sequence[Symptom],
                 measurements: Measurements) -> list[Diagnosis]:
        if of_kind(symptoms, SymptomKind.BACK_PRESSURE):
            return []
        found = sorted(of_kind(symptoms, SymptomKind.OVER_PROVISIONING).values(),
                       key=lambda s: (s.detail["peak_utilisation"], s.component))
        return [Diagnosis(DiagnosisKind.OVER_PROVISIONING, s.component, measurements.time,
                          s.instances, (SymptomKind.OVER_PROVISIONING,), dict(s.detail))
                for s in found]
