"""The engine-facing loop: runs the policies on time and applies actions under guard rails.

The engine's Health Manager process creates one :class:`HealthLoop` per topology and
calls :meth:`HealthLoop.tick` with a fresh :class:`~engine.healthmgr.topology.TopologyView`
every second or so (or sleeps until :meth:`HealthLoop.next_due`). Time comes from the
injected clock only.

Guard rails, in the order they apply:

* **paused**: while the topology is deactivated or any update runs (a manual ``heron
  update`` or this loop's own), no policy runs, so there is one action at a time per
  topology; when it resumes, windows start afresh (metrics from before the pause
  describe another topology);
* **wait after an action**: a policy does not run until its wait after the last action
  of *any* policy has passed (Heron's one-time delay), and its windows never reach back
  before that action. The time of the last action is part of :class:`LoopState`, which
  a restarted Health Manager is given back, so it keeps the wait;
* **actions per hour**: an action is held when the last hour already had
  ``heron.healthmgr.max.actions.per.hour`` of them;
* **parallelism**: a scale outside ``[1, heron.healthmgr.max.parallelism]`` is held (the
  scale-up resolver already caps its target; this guards any policy).

At most one action is applied per tick. An action the actuator refused counts like an
applied one for the wait and the hourly budget: retrying a failing update at every
interval would only hammer the cluster. Every symptom, diagnosis, action and note is
recorded as a :class:`~engine.healthmgr.records.HealthEvent`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import deque
from collections.abc import Callable, Iterable

from engine.healthmgr.actuator import Actuator
from engine.healthmgr.errors import HealthConfigError
from engine.healthmgr.policies.base import Policy
from engine.healthmgr.policies.config import HealthConfig, runtime_mode
from engine.healthmgr.policies.factory import build_policies
from engine.healthmgr.records import Action, ActionKind, ActionStatus, HealthEvent, Note
from engine.healthmgr.source import MetricsSource
from engine.healthmgr.state import LoopState
from engine.healthmgr.topology import TopologyView

log = logging.getLogger(__name__)

Clock = Callable[[], float]

#: records kept in memory for ``heron health`` (older ones are only in the engine's store)
DEFAULT_KEEP_RECORDS = 1000


class HealthLoop:
    def __init__(self, config: HealthConfig, source: MetricsSource, actuator: Actuator,
                 clock: Clock, state: LoopState | None = None, *,
                 policies: Iterable[Policy] | None = None,
                 on_event: Callable[[HealthEvent], None] | None = None,
                 on_state: Callable[[LoopState], None] | None = None,
                 keep_records: int = DEFAULT_KEEP_RECORDS) -> None:
        self.config = config
        self.source = source
        self.actuator = actuator
        self.clock = clock
        self.state = state if state is not None else LoopState()
        self.policies = list(policies) if policies is not None else build_policies(config)
        self.on_event = on_event
        self.on_state = on_state
        self.records: deque[HealthEvent] = deque(maxlen=keep_records)
        start = clock()
        #: a policy's first run is one interval after the start: its window needs data
        self._next_run = {p.config.id: start + p.config.interval_secs for p in self.policies}
        self._activated = {p.config.id: p.config.activated for p in self.policies}
        self._bad_toggle: dict[str, object] = {}
        self._paused: str | None = None
        self._resumed_at: float | None = None

    # -- scheduling -----------------------------------------------------------------------
    def next_due(self) -> float:
        """The earliest time a policy may run (the engine may sleep until then)."""
        waits = [self._earliest(p) for p in self.policies]
        return min(waits, default=self.clock() + 60.0)

    def _earliest(self, policy: Policy) -> float:
        due = self._next_run[policy.config.id]
        if self.state.last_action_time is not None:
            due = max(due, self.state.last_action_time + policy.config.wait_secs)
        return due

    # -- one tick -------------------------------------------------------------------------
    def tick(self, topology: TopologyView) -> list[HealthEvent]:
        """Run every policy that is due; apply at most one action. Returns the new records."""
        now = self.clock()
        out: list[HealthEvent] = []
        if self._pause_reason(topology, now, out):
            return out
        acted = False
        for policy in self.policies:
            pid = policy.config.id
            if now < self._earliest(policy):
                continue
            self._next_run[pid] = now + policy.config.interval_secs
            if not self._policy_activated(policy, topology, now, out):
                continue
            not_before = max((t for t in (self.state.last_action_time, self._resumed_at)
                              if t is not None), default=None)
            result = policy.evaluate(self.source, topology, now, not_before,
                                     self.state.capacities)
            for item in [*result.symptoms, *result.diagnoses, *result.notes]:
                self._emit(out, pid, item)
            if result.action is None:
                continue
            action = dataclasses.replace(result.action, policy=pid)
            if acted:
                action = self._held(action, "another action was applied in this tick")
            else:
                action = self._guard(action, now) or self._apply(action, now)
                acted = action.status is not ActionStatus.HELD
            self._emit(out, pid, action)
        return out

    def _pause_reason(self, topology: TopologyView, now: float,
                      out: list[HealthEvent]) -> bool:
        reason = ("the topology is deactivated" if not topology.active
                  else "an update is running" if topology.updating else None)
        if reason is not None:
            if reason != self._paused:
                self._emit(out, "", Note(now, f"paused: {reason}; no policy runs"))
            self._paused = reason
            return True
        if self._paused is not None:
            self._emit(out, "", Note(now, "resumed: windows start now"))
            self._paused = None
            self._resumed_at = now
        return False

    def _policy_activated(self, policy: Policy, topology: TopologyView, now: float,
                          out: list[HealthEvent]) -> bool:
        """The configured mode, overridden by the run-time toggle ``<id>:runtime``."""
        pid = policy.config.id
        try:
            toggle = runtime_mode(topology.config, pid)
        except HealthConfigError as exc:
            raw = topology.config.get(exc.key)
            if self._bad_toggle.get(pid) != raw:
                self._bad_toggle[pid] = raw
                self._emit(out, pid, Note(now, f"ignored: {exc}"))
            toggle = None
        if toggle is not None and toggle != self._activated[pid]:
            self._activated[pid] = toggle
            self._emit(out, pid, Note(now, f"policy {pid} "
                                      f"{'activated' if toggle else 'deactivated'} at run time"))
        return self._activated[pid]

    # -- guard rails and the actuator ------------------------------------------------------
    def _guard(self, action: Action, now: float) -> Action | None:
        """The action held by the first guard rail that stops it, or None."""
        limit = self.config.max_actions_per_hour
        if self.state.actions_within_hour(now) >= limit:
            return self._held(action, f"{limit} actions in the last hour "
                              "(heron.healthmgr.max.actions.per.hour)")
        if action.kind is ActionKind.SCALE:
            target = action.target if action.target is not None else 0
            if not 1 <= target <= self.config.max_parallelism:
                return self._held(action, f"parallelism {target} is outside 1.."
                                  f"{self.config.max_parallelism} "
                                  "(heron.healthmgr.max.parallelism)")
        return None

    @staticmethod
    def _held(action: Action, why: str) -> Action:
        return dataclasses.replace(action, status=ActionStatus.HELD, note=why)

    def _apply(self, action: Action, now: float) -> Action:
        try:
            if action.kind is ActionKind.SCALE:
                assert action.target is not None
                self.actuator.scale(action.component, action.target)
            else:
                assert action.container is not None
                self.actuator.restart_container(action.container)
            done = dataclasses.replace(action, status=ActionStatus.APPLIED)
        except Exception as exc:  # the engine refused: recorded, and it still counts
            log.warning("health action %s on %s failed: %s", action.kind.value,
                        action.component, exc)
            done = dataclasses.replace(action, status=ActionStatus.FAILED, note=str(exc))
        self.state.note_action(now)
        if self.on_state is not None:
            self.on_state(self.state)
        return done

    def _emit(self, out: list[HealthEvent], policy: str, item: object) -> None:
        event = HealthEvent(policy, item)  # type: ignore[arg-type]
        out.append(event)
        self.records.append(event)
        if self.on_event is not None:
            self.on_event(event)
