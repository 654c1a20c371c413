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

from engine.healthmgr.diagnosers.common import (of_kind, single_back_pressure,
                                                slow_by_latency)
from engine.healthmgr.records import Diagnosis, DiagnosisKind, Symptom, SymptomKind
from engine.healthmgr.sensors import Measurements


class SlowInstanceDiagnoser:
    def diagnose(self, symptoms: Sequence[Symptom],
                 measurements: Measurements) -> list[Diagnosis]:
        bp = single_back_pressure(symptoms)
        if bp is None:
            return []
        name = bp.component
        if name not in of_kind(symptoms, SymptomKind.WAIT_QUEUE_SKEW):
            return []
        component = measurements.components.get(name)
        if component is None:
            return []
        queues = {i: s.mean() for i, s in component.series("wait_queue").items() if len(s)}
        largest = max(queues.values(), default=0.0)
        slow = tuple(sorted(i for i, q in queues.items() if largest < 2 * q))
        found = (SymptomKind.BACK_PRESSURE, SymptomKind.WAIT_QUEUE_SKEW)
        detail: dict = {"mean_queue_bytes": {i: queues[i] for i in slow}}
        if name in of_kind(symptoms, SymptomKind.PROCESSING_RATE_SKEW):
            slow = slow_by_latency(component, slow)
            found += (SymptomKind.PROCESSING_RATE_SKEW,)
            latency = component.series("execute_latency")
            detail = {"mean_queue_bytes": {i: queues[i] for i in slow},
                      "mean_latency_ms": {i: s.mean() for i, s in latency.items() if len(s)}}
        if not slow:
            return []
        return [Diagnosis(DiagnosisKind.SLOW_INSTANCE, name, measurements.time, slow, found,
                          detail)]
