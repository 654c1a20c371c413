"""Recorded metric series for the Health Manager's tests, in the Topology Master's shape.

:func:`record` plays a bolt's instances for a while and keeps every poll in a
:class:`SnapshotHistory` exactly as the engine will: metric values as text, the
per-instance backpressure and wait-queue metrics published by the instance's Stream
Manager (``stmgr-<container>``, component ``__stmgr__``), with the manager's own total of
backpressure it initiated (``__time-spent-back-pressure-initiated-ms``: what it blamed
its instances for, plus the time watermark's pauses it blamed nobody for),
``__execute-count`` by the instance. Counters are cumulative, noise is seeded so every run sees the
same series.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from engine.healthmgr.metrics import (
    BACK_PRESSURE,
    BACK_PRESSURE_INITIATED,
    EXECUTE_COUNT,
    EXECUTE_LATENCY,
    WAIT_QUEUE,
)
from engine.healthmgr.source import SnapshotHistory
from engine.healthmgr.topology import ComponentView, TopologyView

START = 10_000.0


@dataclass
class Profile:
    """One instance's behaviour. Callables take the seconds since the recording began."""

    rate: float | Callable[[float], float] = 100.0   # tuples executed per second
    bp: float | Callable[[float], float] = 0.0       # ms of backpressure caused per second
    queue: float | Callable[[float], float] = 0.0    # bytes waiting at its Stream Manager
    latency_ms: float | None = None                  # mean execute latency, if published
    #: ms per second its queue kept its Stream Manager's spouts paused without the
    #: manager blaming it (the time watermark: its oldest message waited too long while
    #: its bytes stayed under the high watermark)
    held: float | Callable[[float], float] = 0.0
    jitter: float = 0.0                              # relative noise on every sample


def _at(value: float | Callable[[float], float], t: float) -> float:
    return value(t) if callable(value) else value


def instance_id(component: str, task: int, container: int) -> str:
    return f"container_{container}_{component}_{task}"


@dataclass
class Recording:
    history: SnapshotHistory
    #: component -> {instance id: container}
    layout: dict[str, dict[str, int]] = field(default_factory=dict)
    end: float = START

    def view(self, *, fields: Mapping[str, bool] | None = None, active: bool = True,
             updating: bool = False, config: Mapping[str, object] | None = None) -> TopologyView:
        fields = fields or {}
        components = {name: ComponentView(name, dict(instances),
                                          fields_grouped=fields.get(name, False))
                      for name, instances in self.layout.items()}
        components["spout"] = ComponentView("spout", {"container_1_spout_0": 1}, spout=True)
        return TopologyView("t", components, active, updating, dict(config or {}))


def record(components: Mapping[str, list[Profile]], *, secs: float = 300.0,
           period: float = 10.0, seed: int = 7, start: float = START,
           containers: int = 2, recording: Recording | None = None) -> Recording:
    """Poll ``components`` (name -> one profile per task) every ``period`` for ``secs``.
    Task ``k`` lives in container ``1 + k % containers``. With ``recording``, continue it
    (counters go on from where they were)."""
    rng = random.Random(seed)
    rec = recording or Recording(SnapshotHistory(keep_secs=3600.0), end=start)
    first = rec.end
    totals: dict[str, dict[str, float]] = getattr(rec, "_totals", {})
    task = 0
    for name, profiles in components.items():
        rec.layout[name] = {instance_id(name, task + k, 1 + (task + k) % containers):
                            1 + (task + k) % containers for k in range(len(profiles))}
        task += len(profiles)
    held_totals: dict[str, float] = getattr(rec, "_held", {})
    steps = int(round(secs / period))
    for step in range(0 if recording is None else 1, steps + 1):
        now = first + step * period
        t = now - START
        values: dict[str, dict[str, str]] = {}
        owners: dict[str, str] = {}
        held: dict[str, float] = {}  # stmgr -> ms/s it initiated backpressure this step
        task = 0
        for name, profiles in components.items():
            for k, p in enumerate(profiles):
                container = 1 + (task + k) % containers
                iid = instance_id(name, task + k, container)
                stmgr = f"stmgr-{container}"

                def noise(jitter: float = p.jitter) -> float:
                    return 1.0 + rng.uniform(-jitter, jitter)

                acc = totals.setdefault(iid, {"exec": 0.0, "bp": 0.0})
                if step > 0:
                    acc["exec"] += max(0.0, _at(p.rate, t)) * period * noise()
                    blamed = min(1000.0, max(0.0, _at(p.bp, t) * noise()))
                    acc["bp"] += blamed * period
                    caused = min(1000.0, blamed + max(0.0, _at(p.held, t)))
                    held[stmgr] = max(held.get(stmgr, 0.0), caused)
                own = values.setdefault(iid, {})
                own[EXECUTE_COUNT] = str(int(acc["exec"]))
                if p.latency_ms is not None:
                    own[EXECUTE_LATENCY] = str(p.latency_ms)
                owners[iid] = name
                shared = values.setdefault(stmgr, {})
                owners[stmgr] = "__stmgr__"
                shared[BACK_PRESSURE.format(instance=iid)] = str(int(acc["bp"]))
                shared[WAIT_QUEUE.format(instance=iid)] = \
                    str(int(max(0.0, _at(p.queue, t) * noise())))
            task += len(profiles)
        for stmgr in [s for s, owner in owners.items() if owner == "__stmgr__"]:
            held_totals[stmgr] = held_totals.get(stmgr, 0.0) + held.get(stmgr, 0.0) * period
            values[stmgr][BACK_PRESSURE_INITIATED] = str(int(held_totals[stmgr]))
        rec.history.record(now, values, owners)
    rec.end = first + steps * period
    rec._totals = totals  # type: ignore[attr-defined]
    rec._held = held_totals  # type: ignore[attr-defined]
    return rec
