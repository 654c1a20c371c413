"""What a Health Manager must remember across its own restarts.

The engine stores :meth:`LoopState.to_json` (e.g. in the state manager, next to the
topology) after each action and passes :meth:`LoopState.from_json` back to a restarted
:class:`~engine.healthmgr.loop.HealthLoop`, so the wait after the last action and the
hourly action budget survive the restart, as do the capacities learnt under load."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.healthmgr.capacity import CapacityEstimates

#: the actions-per-hour guard rail counts actions in this many seconds
HOUR_SECS = 3600.0


@dataclass
class LoopState:
    #: when the last action was applied or attempted (the Health Manager's clock: wall
    #: time, so it means the same thing after a restart)
    last_action_time: float | None = None
    #: times of the actions of the last hour
    action_times: list[float] = field(default_factory=list)
    capacities: CapacityEstimates = field(default_factory=CapacityEstimates)

    def actions_within_hour(self, now: float) -> int:
        return sum(1 for t in self.action_times if now - t < HOUR_SECS)

    def note_action(self, now: float) -> None:
        self.last_action_time = now
        self.action_times = [t for t in self.action_times if now - t < HOUR_SECS] + [now]

    def to_json(self) -> dict[str, Any]:
        return {"last_action_time": self.last_action_time,
                "action_times": list(self.action_times),
                "capacities": self.capacities.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoopState:
        last = data.get("last_action_time")
        return cls(None if last is None else float(last),
                   [float(t) for t in data.get("action_times", ())],
                   CapacityEstimates.from_json(data.get("capacities", {})))
