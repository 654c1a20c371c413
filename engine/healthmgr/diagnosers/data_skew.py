"""Data skew: in the component in backpressure, some instances get more tuples than the
others (a hot key under fields grouping): both their queues and their rates stand out.

Heron's rule: wait-queue skew and processing-rate skew on the component in backpressure;
the hot instances have a mean queue more than half the largest and a mean rate within
10% of the largest; beyond Heron, not those that take more than twice as long per
tuple as their peers: those are slow instances whose peers starve behind the
backpressure they cause (see ``slow_by_latency``). More instances do not help (the hot
key stays on one), so no policy scales on this diagnosis; it is reported."""

from __future__ import annotations

from collections.abc import Sequence

from engine.healthmgr.diagnosers.common import component_in_back_pressure, slow_by_latency
from engine.healthmgr.records import Diagnosis, DiagnosisKind, Symptom, SymptomKind
from engine.healthmgr.sensors import Measurements


class DataSkewDiagnoser:
    def diagnose(self, symptoms: Sequence[Symptom],
                 measurements: Measurements) -> list[Diagnosis]:
        component = component_in_back_pressure(symptoms, measurements,
                                               SymptomKind.WAIT_QUEUE_SKEW,
                                               SymptomKind.PROCESSING_RATE_SKEW)
        if component is None:
            return []
        name = component.name
        queues = component.means("wait_queue")
        rates = component.means("execute_rate")
        max_queue = max(queues.values(), default=0.0)
        max_rate = max(rates.values(), default=0.0)
        hot = tuple(sorted(i for i in queues.keys() & rates.keys()
                           if max_queue < 2 * queues[i] and max_rate < 1.10 * rates[i]))
        slow = slow_by_latency(component, hot)
        hot = tuple(i for i in hot if i not in slow)
        if not hot:
            return []
        return [Diagnosis(DiagnosisKind.DATA_SKEW, name, measurements.time, hot,
                          (SymptomKind.BACK_PRESSURE, SymptomKind.WAIT_QUEUE_SKEW,
                           SymptomKind.PROCESSING_RATE_SKEW),
                          {"mean_rate": {i: rates[i] for i in hot},
                           "mean_queue_bytes": {i: queues[i] for i in hot}})]
