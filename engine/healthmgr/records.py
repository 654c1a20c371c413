"""Symptoms, diagnoses and actions: the results of each step, and the records kept of them.

Every one is a frozen dataclass with ``to_json()`` returning a JSON-ready dict, so that
``heron health --json``, the tracker and the web page's timeline can show exactly what
the Health Manager saw, concluded and did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class SymptomKind(str, Enum):
    BACK_PRESSURE = "back_pressure"
    LARGE_WAIT_QUEUE = "large_wait_queue"
    GROWING_WAIT_QUEUE = "growing_wait_queue"
    PROCESSING_RATE_SKEW = "processing_rate_skew"
    WAIT_QUEUE_SKEW = "wait_queue_skew"
    OVER_PROVISIONING = "over_provisioning"


class DiagnosisKind(str, Enum):
    UNDER_PROVISIONING = "under_provisioning"
    SLOW_INSTANCE = "slow_instance"
    DATA_SKEW = "data_skew"
    OVER_PROVISIONING = "over_provisioning"


class ActionKind(str, Enum):
    SCALE = "scale"
    RESTART_CONTAINER = "restart_container"


class ActionStatus(str, Enum):
    #: computed by a resolver, not yet through the guard rails
    PROPOSED = "proposed"
    #: the actuator accepted it
    APPLIED = "applied"
    #: the actuator raised; the error is in ``note``
    FAILED = "failed"
    #: a guard rail stopped it; the rail is in ``note``
    HELD = "held"


def _clean(detail: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in detail.items():
        if isinstance(value, float):
            value = round(value, 3)
        elif isinstance(value, (tuple, list, set, frozenset)):
            value = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
        out[key] = value
    return out


@dataclass(frozen=True)
class Symptom:
    """A detector's finding about one component; ``instances`` are the ones it concerns
    most (e.g. those in backpressure, or the high side of a skew)."""

    kind: SymptomKind
    component: str
    time: float
    instances: tuple[str, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"type": "symptom", "kind": self.kind.value, "component": self.component,
                "time": self.time, "instances": list(self.instances),
                "detail": _clean(self.detail)}


@dataclass(frozen=True)
class Diagnosis:
    """A diagnoser's conclusion about one component, from the symptoms it lists."""

    kind: DiagnosisKind
    component: str
    time: float
    instances: tuple[str, ...] = ()
    symptoms: tuple[SymptomKind, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"type": "diagnosis", "kind": self.kind.value, "component": self.component,
                "time": self.time, "instances": list(self.instances),
                "symptoms": [s.value for s in self.symptoms], "detail": _clean(self.detail)}


@dataclass(frozen=True)
class Action:
    """One change to the topology: scale ``component`` from ``current`` to ``target``
    instances, or restart ``container``. ``reason`` says why in a sentence."""

    kind: ActionKind
    component: str
    time: float
    diagnosis: DiagnosisKind
    reason: str
    current: int | None = None
    target: int | None = None
    container: int | None = None
    policy: str = ""
    status: ActionStatus = ActionStatus.PROPOSED
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"type": "action", "kind": self.kind.value, "component": self.component,
                "time": self.time, "diagnosis": self.diagnosis.value, "reason": self.reason,
                "current": self.current, "target": self.target, "container": self.container,
                "policy": self.policy, "status": self.status.value, "note": self.note}


@dataclass(frozen=True)
class Note:
    """Something the loop decided that is neither symptom, diagnosis nor action: it paused
    (topology deactivated, update running), a policy was toggled, a resolver had nothing
    it could do (at the parallelism limit, keys may not move)."""

    time: float
    message: str
    policy: str = ""
    component: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"type": "note", "time": self.time, "policy": self.policy,
                "component": self.component, "message": self.message}


@dataclass(frozen=True)
class HealthEvent:
    """A record as the loop keeps it: what, by which policy."""

    policy: str
    item: Symptom | Diagnosis | Action | Note

    @property
    def time(self) -> float:
        return self.item.time

    def to_json(self) -> dict[str, Any]:
        return {**self.item.to_json(), "policy": self.policy}
