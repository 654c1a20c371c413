"""``heron update`` (and the Health Manager's scaling): change a running topology's
parallelism through a new packing plan.

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
from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.common.grouping.key_groups import moves
from engine.common.plan.topology_config import topology_config
from engine.common.plan.validation import PARALLELISM_CONFIG_KEY
from engine.config.key_groups import key_groups
from engine.messages import ckptmgr_pb2, topology_pb2
from engine.packing import PackingError
from engine.packing.repack import moved_tasks, repack
from engine.spi.packing_plan import PackingPlan
from engine.spi.statemgr import StateManager
from engine.submitter.stateful_guard import effectively_once, refusal, stateful_components


class UpdateError(Exception):
    """The update cannot be made; the message names the topology, component or value."""


@dataclass
class UpdatePlan:
    name: str
    current: PackingPlan
    proposed: PackingPlan
    topology: topology_pb2.Topology   # the stored Topology proto with the new parallelism
    before: dict[str, int]            # component -> parallelism now
    after: dict[str, int]             # component -> parallelism after
    changes: dict[str, list[int]]     # added / removed / moved task ids
    #: consumers subscribed with a fields grouping whose parallelism changes: their keys move
    rekeyed: list[str]
    #: EFFECTIVELY_ONCE stateful components whose parallelism changes: what their keyed
    #: state does (it moves with its keys)
    key_group_moves: list[KeyGroupMoves] = field(default_factory=list)


@dataclass
class KeyGroupMoves:
    component: str
    groups: int
    #: (first group, last group, old task index, new task index), ranges of moving groups
    ranges: list[tuple[int, int, int, int]]
    #: the keyed state those groups held at the newest checkpoint, estimated (0: unknown)
    approx_bytes: int = 0

    @property
    def moved(self) -> int:
        return sum(last - first + 1 for first, last, _, _ in self.ranges)


def key_group_moves(component: str, before: int, after: int, groups: int,
                    component_bytes: int = 0) -> KeyGroupMoves:
    """Which key groups a resize moves, as ranges (old index -> new index)."""
    ranges: list[tuple[int, int, int, int]] = []
    for g, old, new in moves(before, after, groups):
        if ranges and ranges[-1][1] == g - 1 and ranges[-1][2:] == (old, new):
            ranges[-1] = (ranges[-1][0], g, old, new)
        else:
            ranges.append((g, g, old, new))
    result = KeyGroupMoves(component, groups, ranges)
    result.approx_bytes = component_bytes * result.moved // groups if groups else 0
    return result


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


def _components(topology: topology_pb2.Topology) -> list[topology_pb2.Component]:
    return [s.comp for s in topology.spouts] + [b.comp for b in topology.bolts]


def component_parallelism(topology: topology_pb2.Topology) -> dict[str, int]:
    out = {}
    for comp in _components(topology):
        value = 1
        for kv in comp.config.kvs:
            if kv.key == PARALLELISM_CONFIG_KEY:
                value = int(json.loads(kv.value)) if kv.value.strip() else 1
        out[comp.name] = value
    return out


def _set_parallelism(topology: topology_pb2.Topology, parallelism: Mapping[str, int]) -> None:
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


def _fields_consumers(topology: topology_pb2.Topology, changed: set[str]) -> list[str]:
    out = []
    for bolt in topology.bolts:
        if bolt.comp.name in changed and any(i.gtype == topology_pb2.FIELDS for i in bolt.inputs):
            out.append(bolt.comp.name)
    return sorted(out)


def plan_update(state: StateManager, name: str, parallelism: Mapping[str, int],
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
    refused = refusal(topology, current, proposed, parallelism,
                      state.get("statefulcheckpoints", name))
    if refused is not None:
        raise UpdateError(refused)
    after = {c: parallelism.get(c, n) for c, n in before.items()}
    updated = type(topology)()
    updated.CopyFrom(topology)
    _set_parallelism(updated, after)
    changed = {c for c in after if after[c] != before[c]}
    moving = _moving_state(topology, changed, before, after,
                           state.get("statefulcheckpoints", name))
    return UpdatePlan(name, current, proposed, updated, before, after,
                      moved_tasks(current, proposed),
                      _fields_consumers(topology, changed - {m.component for m in moving}),
                      moving)


def _moving_state(topology: topology_pb2.Topology, changed: set[str], before: Mapping[str, int],
                  after: Mapping[str, int],
                  checkpoints: ckptmgr_pb2.StatefulConsistentCheckpoints | None
                  ) -> list[KeyGroupMoves]:
    if not effectively_once(topology):
        return []
    groups = key_groups(topology_config(topology))
    sizes: dict[str, int] = {}
    if checkpoints is not None and len(checkpoints.consistent_checkpoints):
        # the keyed state as stored (every group's chain), not what the newest incremental
        # checkpoint wrote; a record from before keyed_bytes existed has only the latter
        sizes = {c.component: c.keyed_bytes if c.HasField("keyed_bytes") else c.bytes
                 for c in checkpoints.consistent_checkpoints[0].components}
    # a component whose newest checkpoint holds no keyed state moves no key group (its
    # per-task state is shared out by rescale_state instead)
    return [key_group_moves(c, before[c], after[c], groups, sizes.get(c, 0))
            for c in sorted(changed & stateful_components(topology))
            if c not in sizes or sizes[c] > 0]


def apply_update(state: StateManager, plan: UpdatePlan) -> None:
    """Store the topology's new parallelism, then the new packing plan (the executors and
    the Topology Master act on the latter)."""
    state.set("topologies", plan.name, plan.topology)
    state.set("packingplans", plan.name, plan.proposed.to_proto())
