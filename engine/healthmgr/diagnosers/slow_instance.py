"""Slow instance: in the component in backpressure, one instance's queue stands out
while all process at similar rates (they are held to the slow one's pace).

Heron's rule: wait-queue skew and no processing-rate skew on the component in
backpressure; the slow instances are those whose mean queue is more than half the
largest (``max < 2 x own``).

Beyond Heron: with processing-rate skew too, the instances whose queues stand out are
still slow ones when they take more than twice as long per tuple as their peers (their
mean execute latency against the peers' median): their peers' low rates are starvation
behind the backpressure the slow instance causes, not fewer tuples for them
(``slow_by_latency``). Without latency data, Heron's rule alone."""

from __future__ import annotations

from collections.abc import Sequence

from engine.healthmgr.diagnosers.common import component_in_back_pressure, of_kind, slow_by_latency
from engine.healthmgr.records import Diagnosis, DiagnosisKind, Symptom, SymptomKind
from engine.healthmgr.sensors import Measurements


class SlowInstanceDiagnoser:
    def diagnose(self, symptoms: Sequence[Symptom],
                 measurements: Measurements) -> list[Diagnosis]:
        component = component_in_back_pressure(symptoms, measurements,
                                               SymptomKind.WAIT_QUEUE_SKEW)
        if component is None:
            return []
        name = component.name
        queues = component.means("wait_queue")
        largest = max(queues.values(), default=0.0)
        slow = tuple(sorted(i for i, q in queues.items() if largest < 2 * q))
        found: tuple[SymptomKind, ...] = (SymptomKind.BACK_PRESSURE, SymptomKind.WAIT_QUEUE_SKEW)
        detail: dict = {"mean_queue_bytes": {i: queues[i] for i in slow}}
        if name in of_kind(symptoms, SymptomKind.PROCESSING_RATE_SKEW):
            slow = slow_by_latency(component, slow)
            found += (SymptomKind.PROCESSING_RATE_SKEW,)
            detail = {"mean_queue_bytes": {i: queues[i] for i in slow},
                      "mean_latency_ms": component.means("execute_latency")}
        if not slow:
            return []
        return [Diagnosis(DiagnosisKind.SLOW_INSTANCE, name, measurements.time, slow, found,
                          detail)]
