"""What one run of a policy produces, and what every policy offers the loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from engine.healthmgr.capacity import CapacityEstimates
from engine.healthmgr.policies.config import PolicyConfig
from engine.healthmgr.records import Action, Diagnosis, Note, Symptom
from engine.healthmgr.sensors import Measurements
from engine.healthmgr.source import MetricsSource
from engine.healthmgr.topology import TopologyView


@dataclass
class Evaluation:
    """Symptoms and diagnoses found, at most one proposed action, and notes on what the
    policy could not do."""

    symptoms: list[Symptom] = field(default_factory=list)
    diagnoses: list[Diagnosis] = field(default_factory=list)
    action: Action | None = None
    notes: list[Note] = field(default_factory=list)


class Detector(Protocol):
    """A detector of ``engine.healthmgr.detectors`` that needs only the measurements
    (the over-provisioning one also takes the capacity estimates)."""

    def detect(self, measurements: Measurements) -> list[Symptom]:
        """The symptoms found in ``measurements``."""
        ...


class Policy(Protocol):
    config: PolicyConfig

    def evaluate(self, source: MetricsSource, topology: TopologyView, now: float,
                 not_before: float | None, capacities: CapacityEstimates) -> Evaluation:
        """Sense, detect, diagnose and resolve once; apply nothing."""
        ...
