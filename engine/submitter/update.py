"""``heron update`` (and the Health Manager's scaling): change a running topology's parallelism through a new packing plan.

Heron's order: compute the proposed packing plan from the current one (repacking, so
surviving instances keep their task ids and containers), store the topology with its
new parallelism and the new packing plan, then ask the scheduler to add or remove whole
containers. Every executor watches the packing plan and starts or stops its own
instances (restarting its Stream Manager so it registers its new instance set); the
Topology Master watches it too and builds the new physical plan once every Stream Manager
has registered again. Only containers whose instances change restart anything but the
Stream Manager; under at-least-once, trees cut by those restarts time out and replay.
Under effectively-once, a change that would change a stateful component's task ids is
refused before anything is stored (engine/submitter/stateful_guard.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from engine.messages import topology_pb2
from engine.packing import PackingError
from engine.spi.packing_plan import PackingPlan
from engine.packing.repack import moved_tasks, repack
from engine.plan.topology_config import topology_config
from engine.plan.validation import PARALLELISM_CONFIG_KEY
from engine.submitter.stateful_guard import refusal


class UpdateError(Exception):
    """The update cannot be made; the message names the topology, component or value."""


@dataclass
class UpdatePlan:
    name: str
    current: PackingPlan
    proposed: PackingPlan
    topology: Any                     # the stored Topology proto with the new parallelism
    before: dict[str, int]            # component -> parallelism now
    after: dict[str, int]             # component -> parallelism after
    changes: dict[str, list[int]]     # added / removed / moved task ids
    #: consumers subscribed with a fields grouping whose parallelism changes: their keys move
    rekeyed: list[str]


def parse_parallelism(values: tuple[str, ...] | list[str]) -> dict[str, int]:
    """``["word:3", "count:2"]`` -> ``{"word": 3, "count": 2}``, errors naming the value."""
    out: dict[str, int] = {}
    for raw in values:
        name, sep, count = raw.rpartition(":")
        if not sep or not name:
            raise UpdateError(f"--component-parallelism {raw!r}: expected COMPONENT:N")
        try:
            number = int(count)
        except ValueError:
            raise UpdateError(f"--component-parallelism {raw!r}: {count!r} is not a whole "
                              "number") from None
        if number < 1:
            raise UpdateError(f"--component-parallelism {raw!r}: parallelism must be at least 1")
        if name in out:
            raise UpdateError(f"--component-parallelism names {name!r} twice")
        out[name] = number
    return out


def _components(topology: Any) -> list[Any]:
    return [s.comp for s in topology.spouts] + [b.comp for b in topology.bolts]


def component_parallelism(topology: Any) -> dict[str, int]:
    out = {}
    for comp in _components(topology):
        value = 1
        for kv in comp.config.kvs:
            if kv.key == PARALLELISM_CONFIG_KEY:
                value = int(json.loads(kv.value)) if kv.value.strip() else 1
        out[comp.name] = value
    return out


def _set_parallelism(topology: Any, parallelism: Mapping[str, int]) -> None:
    for comp in _components(topology):
        if comp.name not in parallelism:
            continue
        for kv in comp.config.kvs:
            if kv.key == PARALLELISM_CONFIG_KEY:
                kv.value = json.dumps(parallelism[comp.name])
                kv.type = topology_pb2.JSON_VALUE
                break
        else:
            comp.config.kvs.add(key=PARALLELISM_CONFIG_KEY,
                                value=json.dumps(parallelism[comp.name]),
                                type=topology_pb2.JSON_VALUE)


def _fields_consumers(topology: Any, changed: set[str]) -> list[str]:
    out = []
    for bolt in topology.bolts:
        if bolt.comp.name in changed and any(i.gtype == topology_pb2.FIELDS for i in bolt.inputs):
            out.append(bolt.comp.name)
    return sorted(out)


def plan_update(state: Any, name: str, parallelism: Mapping[str, int],
                containers: int | None = None) -> UpdatePlan:
    """What ``heron update`` would do, computed from the stored topology and plan."""
    topology = state.get("topologies", name)
    stored = state.get("packingplans", name)
    if topology is None or stored is None:
        raise UpdateError(f"no running topology named {name!r}")
    if not parallelism and containers is None:
        raise UpdateError("nothing to update: give --component-parallelism COMPONENT:N "
                          "and/or --container-number N")
    before = component_parallelism(topology)
    current = PackingPlan.from_proto(stored)
    conf = topology_config(topology)
    try:
        proposed = repack(current, name, before, parallelism, conf, containers)
    except PackingError as exc:
        raise UpdateError(str(exc)) from None
    # before anything is stored or any scheduler asked: state does not move with its keys
    refused = refusal(topology, current, proposed, parallelism)
    if refused is not None:
        raise UpdateError(refused)
    after = {c: parallelism.get(c, n) for c, n in before.items()}
    updated = type(topology)()
    updated.CopyFrom(topology)
    _set_parallelism(updated, after)
    changed = {c for c in after if after[c] != before[c]}
    return UpdatePlan(name, current, proposed, updated, before, after,
                      moved_tasks(current, proposed), _fields_consumers(topology, changed))


def apply_update(state: Any, plan: UpdatePlan) -> None:
    """Store the topology's new parallelism, then the new packing plan (the executors and
    the Topology Master act on the latter)."""
    state.set("topologies", plan.name, plan.topology)
    state.set("packingplans", plan.name, plan.proposed.to_proto())
