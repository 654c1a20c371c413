"""The loop's guard rails with a fake clock: waits, hourly budget, pauses, limits, toggles."""

from __future__ import annotations

import json

from engine.healthmgr.loop import HealthLoop
from engine.healthmgr.policies.config import HealthConfig
from engine.healthmgr.records import Action, ActionStatus, Note
from engine.healthmgr.source import SnapshotHistory
from engine.healthmgr.state import LoopState
from engine.healthmgr.topology import ComponentView, TopologyView
from tests.engine.healthmgr.fakes import FakeClock, RecordingActuator, ScriptedPolicy, policy_config

DRA = "dynamic-resource-allocation"


def topology(**options: object) -> TopologyView:
    count = ComponentView("count", {"container_1_count_0": 1, "container_2_count_1": 2})
    return TopologyView("t", {"count": count}, **options)  # type: ignore[arg-type]


def make_loop(policies, *, max_parallelism=16, per_hour=100, state=None, clock=None):
    clock = clock or FakeClock()
    actuator = RecordingActuator(clock)
    cfg = HealthConfig(True, tuple(p.config for p in policies), max_parallelism, per_hour)
    loop = HealthLoop(cfg, SnapshotHistory(3600), actuator, clock, state, policies=policies)
    return loop, clock, actuator


def run(loop, clock, secs, view=None, step=1.0):
    events = []
    for _ in range(int(secs / step)):
        clock.advance(step)
        events += loop.tick(view or topology())
    return events


def actions(events):
    return [e.item for e in events if isinstance(e.item, Action)]


def test_first_run_is_one_interval_in_and_the_wait_follows_every_action():
    policy = ScriptedPolicy(policy_config(interval_ms=2000, wait_ms=15_000))
    loop, clock, actuator = make_loop([policy])
    run(loop, clock, 40)
    assert [t for t, _, _ in actuator.calls] == [1002.0, 1017.0, 1032.0]
    # the policy did not even run during the waits (Heron's one-time delay)
    assert [t for t, _ in policy.runs] == [1002.0, 1017.0, 1032.0]
    # and its windows never reach back before the last action
    assert [nb for _, nb in policy.runs] == [None, 1002.0, 1017.0]


def test_a_restarted_health_manager_keeps_the_wait_after_its_last_action():
    saved = LoopState()
    saved.note_action(995.0)
    restored = LoopState.from_json(json.loads(json.dumps(saved.to_json())))
    policy = ScriptedPolicy(policy_config(interval_ms=2000, wait_ms=15_000))
    loop, clock, actuator = make_loop([policy], state=restored)
    run(loop, clock, 15)
    assert [t for t, _, _ in actuator.calls] == [1010.0]  # 995 + 15, not 1000 + 2


def test_actions_per_hour_are_limited_and_the_budget_frees_up_after_an_hour():
    policy = ScriptedPolicy(policy_config(interval_ms=60_000, wait_ms=0))
    loop, clock, actuator = make_loop([policy], per_hour=2)
    events = run(loop, clock, 600, step=60)
    assert [t for t, _, _ in actuator.calls] == [1060.0, 1120.0]
    held = [a for a in actions(events) if a.status is ActionStatus.HELD]
    assert len(held) == 8 and "max.actions.per.hour" in held[0].note
    run(loop, clock, 3120, step=60)  # to 4720: 3600 s after each of the two
    assert [t for t, _, _ in actuator.calls][2:] == [4660.0, 4720.0]


def test_nothing_runs_while_the_topology_is_deactivated_and_windows_restart_after():
    policy = ScriptedPolicy(policy_config(interval_ms=2000))
    loop, clock, actuator = make_loop([policy])
    events = run(loop, clock, 30, view=topology(active=False))
    assert actuator.calls == [] and policy.runs == []
    notes = [e.item.message for e in events if isinstance(e.item, Note)]
    assert len(notes) == 1 and "deactivated" in notes[0]  # said once, not every tick
    run(loop, clock, 1)
    assert [(t, nb) for t, nb in policy.runs] == [(1031.0, 1031.0)]
    assert len(actuator.calls) == 1


def test_nothing_runs_while_a_manual_update_runs():
    policy = ScriptedPolicy(policy_config(interval_ms=2000))
    loop, clock, actuator = make_loop([policy])
    events = run(loop, clock, 20, view=topology(updating=True))
    assert actuator.calls == []
    assert any("update is running" in e.item.message for e in events
               if isinstance(e.item, Note))


def test_a_scale_beyond_the_parallelism_limit_is_held():
    policy = ScriptedPolicy(policy_config(interval_ms=2000), target=20)
    loop, clock, actuator = make_loop([policy], max_parallelism=16)
    events = run(loop, clock, 2)
    assert actuator.calls == []
    [held] = actions(events)
    assert held.status is ActionStatus.HELD and "max.parallelism" in held.note


def test_one_action_per_tick_across_policies():
    first = ScriptedPolicy(
        policy_config(
            "a",
            interval_ms=2000,
            wait_ms=0,
            **{"health.policy.class": "DynamicResourceAllocationPolicy"},
        )
    )
    second = ScriptedPolicy(
        policy_config(
            "b",
            interval_ms=2000,
            wait_ms=0,
            **{"health.policy.class": "DynamicResourceAllocationPolicy"},
        )
    )
    loop, clock, actuator = make_loop([first, second])
    events = run(loop, clock, 2)
    assert len(actuator.calls) == 1
    statuses = [(a.policy, a.status) for a in actions(events)]
    assert statuses == [("a", ActionStatus.APPLIED), ("b", ActionStatus.HELD)]


def test_run_time_toggle_deactivates_and_reactivates_a_policy():
    policy = ScriptedPolicy(policy_config(interval_ms=2000, wait_ms=0))
    loop, clock, actuator = make_loop([policy])
    off = topology(config={f"{DRA}:runtime": "deactivated"})
    events = run(loop, clock, 30, view=off)
    assert actuator.calls == []
    assert [e.item.message for e in events] == [f"policy {DRA} deactivated at run time"]
    run(loop, clock, 2, view=topology(config={f"{DRA}:runtime": "activated"}))
    assert len(actuator.calls) == 1


def test_an_invalid_toggle_is_reported_once_and_ignored():
    policy = ScriptedPolicy(policy_config(interval_ms=2000, wait_ms=60_000))
    loop, clock, actuator = make_loop([policy])
    events = run(loop, clock, 10, view=topology(config={f"{DRA}:runtime": "off"}))
    notes = [e.item.message for e in events if isinstance(e.item, Note)]
    assert len(notes) == 1 and f"{DRA}:runtime" in notes[0]
    assert len(actuator.calls) == 1  # the configured mode (activated) stands


def test_a_refused_action_is_recorded_and_still_starts_the_wait():
    policy = ScriptedPolicy(policy_config(interval_ms=2000, wait_ms=15_000))
    loop, clock, actuator = make_loop([policy])
    actuator.fail_with = RuntimeError("update refused: topology busy")
    events = run(loop, clock, 10)
    [failed] = actions(events)
    assert failed.status is ActionStatus.FAILED and "busy" in failed.note
    assert len(actuator.calls) == 1 and loop.state.last_action_time == 1002.0


def test_every_record_is_json():
    policy = ScriptedPolicy(policy_config(interval_ms=2000))
    loop, clock, _ = make_loop([policy])
    run(loop, clock, 3, view=topology(active=False))
    run(loop, clock, 5)
    text = json.dumps([e.to_json() for e in loop.records])
    kinds = [r["type"] for r in json.loads(text)]
    assert kinds == ["note", "note", "action"]
    action = json.loads(text)[-1]
    assert (action["policy"], action["status"], action["target"]) == (DRA, "applied", 3)
