"""What Heron's diagnosers share: the single component in backpressure, symptoms by kind."""

from __future__ import annotations

from collections.abc import Iterable

from engine.healthmgr.records import Symptom, SymptomKind


def of_kind(symptoms: Iterable[Symptom], kind: SymptomKind) -> dict[str, Symptom]:
    """Symptoms of one kind by component."""
    return {s.component: s for s in symptoms if s.kind == kind}


def single_back_pressure(symptoms: Iterable[Symptom]) -> Symptom | None:
    """The backpressure symptom when exactly one component has one, else None."""
    found = list(of_kind(symptoms, SymptomKind.BACK_PRESSURE).values())
    return found[0] if len(found) == 1 else None
