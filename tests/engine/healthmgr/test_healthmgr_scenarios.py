"""The real policies driven by a simulated bolt, with the issue's test settings (interval
2 s, window 10 s, wait 15 s): the loop scales up until backpressure stops, scales back
down after the load drops, reports a hot key without scaling, restarts a slow instance's
container once.

The plant is deliberately simple: each instance executes at most ``capacity`` tuples/s;
under shuffle grouping every instance is held to the slowest one's pace (the Stream
Manager pauses the spout when any queue is full); the share of each second the spout is
paused is reported as backpressure, divided among the saturated instances; a saturated
instance has a long queue, the others a short one."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.healthmgr.loop import HealthLoop
from engine.healthmgr.metrics import BACK_PRESSURE, EXECUTE_COUNT, WAIT_QUEUE
from engine.healthmgr.policies.config import parse_health_config
from engine.healthmgr.records import Action, ActionKind, ActionStatus, Diagnosis, DiagnosisKind
from engine.healthmgr.source import SnapshotHistory
from engine.healthmgr.topology import ComponentView, TopologyView
from tests.engine.healthmgr.fakes import FakeClock

TEST_SETTINGS = {"health.policy.interval.ms": 2000, "health.policy.window.ms": 10_000,
                 "health.policy.post.action.wait.ms": 15_000}


@dataclass
class Plant:
    """A spout offering ``offered(t)`` tuples/s to bolt ``count``; also the actuator."""

    clock: FakeClock
    offered: Callable[[float], float]
    parallelism: int = 2
    capacity: float = 200.0
    #: share of the tuples each instance gets (None: even, as shuffle)
    shares: Callable[[int], list[float]] | None = None
    #: instance index -> capacity override (a slow instance), cleared by a restart
    slow: dict[int, float] = field(default_factory=dict)
    history: SnapshotHistory = field(default_factory=lambda: SnapshotHistory(600))
    counters: dict[str, list[float]] = field(default_factory=dict)
    calls: list[tuple[float, str, int]] = field(default_factory=list)

    def ids(self) -> dict[str, int]:
        return {f"container_{1 + k % 2}_count_{k}": 1 + k % 2 for k in range(self.parallelism)}

    # -- Actuator -------------------------------------------------------------------------
    def scale(self, component: str, parallelism: int) -> None:
        self.calls.append((self.clock(), "scale", parallelism))
        self.parallelism = parallelism

    def restart_container(self, container: int) -> None:
        self.calls.append((self.clock(), "restart", container))
        self.slow = {k: c for k, c in self.slow.items() if 1 + k % 2 != container}

    # -- one second of traffic ------------------------------------------------------------
    def step(self) -> None:
        now = self.clock()
        ids = list(self.ids())
        n = len(ids)
        offered = self.offered(now)
        shares = self.shares(n) if self.shares else [1.0 / n] * n
        caps = [self.slow.get(k, self.capacity) for k in range(n)]
        if self.shares is None:
            pace = min(caps)  # held to the slowest instance
            done = [min(offered * s, pace) for s in shares]
        else:
            # fields grouping: the hot instance throttles the spout for everyone
            scale = min(1.0, min(c / (offered * s) for c, s in zip(caps, shares) if s > 0))
            done = [offered * s * scale for s in shares]
        paused = 1.0 - sum(done) / offered if offered > 0 else 0.0
        saturated = [k for k in range(n) if done[k] >= caps[k] - 1e-9]
        values: dict[str, dict[str, str]] = {}
        owners = {"stmgr-1": "__stmgr__", "stmgr-2": "__stmgr__"}
        for k, iid in enumerate(ids):
            acc = self.counters.setdefault(iid, [0.0, 0.0])
            acc[0] += done[k]
            if k in saturated and paused > 0.001:
                acc[1] += 1000.0 * paused / len(saturated)
            stmgr = f"stmgr-{1 + k % 2}"
            values.setdefault(iid, {})[EXECUTE_COUNT] = str(int(acc[0]))
            owners[iid] = "count"
            shared = values.setdefault(stmgr, {})
            shared[BACK_PRESSURE.format(instance=iid)] = str(int(acc[1]))
            shared[WAIT_QUEUE.format(instance=iid)] = "120000" if k in saturated else "800"
        self.history.record(now, values, owners)

    def view(self, config: dict[str, object] | None = None) -> TopologyView:
        return TopologyView("t", {"count": ComponentView("count", self.ids(),
                                                         fields_grouped=self.shares is not None),
                                  "spout": ComponentView("spout", {"container_1_spout_9": 1},
                                                         spout=True)},
                            config=config or {})


def simulate(plant: Plant, config: dict[str, object], secs: int,
             runtime: Callable[[float], dict[str, object]] | None = None) -> HealthLoop:
    loop = HealthLoop(parse_health_config(config), plant.history, plant, plant.clock)
    for _ in range(secs):
        plant.clock.advance(1.0)
        plant.step()
        loop.tick(plant.view(runtime(plant.clock()) if runtime else None))
    return loop


def items(loop: HealthLoop, kind: type) -> list:
    return [e.item for e in loop.records if isinstance(e.item, kind)]


def test_scales_up_until_backpressure_stops_then_down_after_the_load_drops():
    clock = FakeClock(0.0)
    plant = Plant(clock, offered=lambda t: 500.0 if t < 60 else 150.0)
    simulate(plant, {"heron.class.health.policies": ["dynamic-resource-allocation"],
                     "dynamic-resource-allocation": TEST_SETTINGS}, 120)
    # 400 of 500/s done: 200 ms/s paused, unused 0.25, ceil(2 x 1.25) = 3 instances of 200/s
    assert plant.calls[0] == (2.0, "scale", 3)
    # 150/s at 200/s per instance (learnt under backpressure), sized to 70%: 2 instances,
    # as soon as a whole window (10 s) shows only the low load, which began in the
    # second ending at 60, i.e. at 59 + 10
    assert [c[1:] for c in plant.calls] == [("scale", 3), ("scale", 2)]
    assert plant.calls[1][0] == 69.0


def test_a_hot_key_is_reported_as_data_skew_and_nothing_is_scaled():
    clock = FakeClock(0.0)
    plant = Plant(clock, offered=lambda t: 400.0, parallelism=3,
                  shares=lambda n: [0.7] + [0.3 / (n - 1)] * (n - 1))
    loop = simulate(plant, {"dynamic-resource-allocation": TEST_SETTINGS}, 30)
    assert plant.calls == []
    skews = [d for d in items(loop, Diagnosis) if d.kind is DiagnosisKind.DATA_SKEW]
    assert skews and {d.instances for d in skews} == {("container_1_count_0",)}
    assert json_has(loop, "data_skew", "container_1_count_0")


def json_has(loop: HealthLoop, kind: str, instance: str) -> bool:
    json.dumps([e.to_json() for e in loop.records])  # every record, symptoms included
    return any(r["type"] == "diagnosis" and r["kind"] == kind and instance in r["instances"]
               for r in (e.to_json() for e in loop.records))


def test_a_slow_instance_gets_exactly_one_restart_of_its_container():
    clock = FakeClock(0.0)
    plant = Plant(clock, offered=lambda t: 300.0, parallelism=3, slow={1: 40.0})
    loop = simulate(plant, {"dynamic-resource-allocation": TEST_SETTINGS,
                            "auto-restart-backpressure-container":
                            {**TEST_SETTINGS, "health.policy.mode": "activated"}}, 60)
    assert [c[1:] for c in plant.calls] == [("restart", 2)]  # container of count_1
    [restart] = [a for a in items(loop, Action) if a.status is ActionStatus.APPLIED]
    assert (restart.kind, restart.policy) == (ActionKind.RESTART_CONTAINER,
                                              "auto-restart-backpressure-container")


def test_deactivating_the_policy_at_run_time_stops_actions_despite_backpressure():
    clock = FakeClock(0.0)
    # far more load than 16 instances can take: backpressure persists throughout
    plant = Plant(clock, offered=lambda t: 10_000.0)
    secs = 5 + 3 * 2 + 15 + 5  # the toggle, three intervals, the wait, and some more
    simulate(plant, {"dynamic-resource-allocation": TEST_SETTINGS}, secs,
             runtime=lambda t: ({"dynamic-resource-allocation:runtime": "deactivated"}
                                if t >= 5.0 else {}))
    assert [c[1:] for c in plant.calls] == [("scale", 10)]  # before the toggle only
    # the same without the toggle scales again once the wait is over
    control = Plant(FakeClock(0.0), offered=lambda t: 10_000.0)
    simulate(control, {"dynamic-resource-allocation": TEST_SETTINGS}, secs)
    assert [c[1:] for c in control.calls] == [("scale", 10), ("scale", 16)]
