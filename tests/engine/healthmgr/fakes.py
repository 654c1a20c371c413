"""Test doubles for the loop: a clock, a recording actuator, a policy that always wants to act."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.healthmgr.capacity import CapacityEstimates
from engine.healthmgr.policies.base import Evaluation
from engine.healthmgr.policies.config import PolicyConfig, parse_policy
from engine.healthmgr.records import Action, ActionKind, DiagnosisKind
from engine.healthmgr.source import MetricsSource
from engine.healthmgr.topology import TopologyView


class FakeClock:
    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, secs: float) -> None:
        self.now += secs


@dataclass
class RecordingActuator:
    clock: FakeClock
    calls: list[tuple[float, str, object]] = field(default_factory=list)
    fail_with: Exception | None = None

    def scale(self, component: str, parallelism: int) -> None:
        self.calls.append((self.clock(), f"scale {component}", parallelism))
        if self.fail_with is not None:
            raise self.fail_with

    def restart_container(self, container: int) -> None:
        self.calls.append((self.clock(), "restart", container))
        if self.fail_with is not None:
            raise self.fail_with


class ScriptedPolicy:
    """Proposes scaling ``count`` to ``target`` at every run; remembers each run."""

    def __init__(self, config: PolicyConfig, target: int = 3) -> None:
        self.config = config
        self.target = target
        self.runs: list[tuple[float, float | None]] = []

    def evaluate(self, source: MetricsSource, topology: TopologyView, now: float,
                 not_before: float | None, capacities: CapacityEstimates) -> Evaluation:
        self.runs.append((now, not_before))
        return Evaluation(action=Action(ActionKind.SCALE, "count", now,
                                        DiagnosisKind.UNDER_PROVISIONING, "scripted",
                                        current=2, target=self.target))


def policy_config(policy_id: str = "dynamic-resource-allocation", *, interval_ms: int = 2000,
                  wait_ms: int = 15_000, **extra: object) -> PolicyConfig:
    settings = {"health.policy.interval.ms": interval_ms,
                "health.policy.post.action.wait.ms": wait_ms, **extra}
    return parse_policy({policy_id: settings}, policy_id)
