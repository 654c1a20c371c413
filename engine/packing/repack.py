"""Repacking a running topology for ``heron update`` (Heron's ``IRepacking``).

A fresh packing would renumber tasks (ids are dealt by component name) and move most
instances, restarting nearly every process. Repacking instead keeps every surviving
instance where it is, under its task id: a component that grows gets new task ids above
the highest in use and the new instances go to the least loaded containers; one that
shrinks loses its highest component indexes. ``containers`` changes the container count:
instances of removed containers move to the least loaded remaining ones, new containers
fill up from the new instances first.

Fields groupings pick ``tasks[hash % n]``, so when a consumer's parallelism changes,
keys move between its tasks (Heron documents the same): state kept per key in a task
does not follow the key.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from engine.packing.round_robin import padding
from engine.spi.packing_errors import PackingError
from engine.spi.packing_plan import ContainerPlan, InstancePlan, PackingPlan
from engine.spi.resources import Resource, component_resources


def repack(current: PackingPlan, topology_name: str, components: Mapping[str, int],
           parallelism: Mapping[str, int], conf: Mapping[str, Any],
           containers: int | None = None) -> PackingPlan:
    """The plan after changing ``parallelism`` (component -> new count) and optionally
    the number of ``containers``; ``components`` is every component's current count."""
    for name, count in parallelism.items():
        if name not in components:
            raise PackingError(f"no component {name!r} in topology {topology_name!r}; "
                               f"components: {', '.join(sorted(components))}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise PackingError(f"the parallelism of {name!r} must be a positive int, "
                               f"got {count!r}")
    current_count = len(current.containers)
    target = current_count if containers is None else containers
    if isinstance(target, bool) or not isinstance(target, int) or target < 1:
        raise PackingError(f"the container number must be a positive int, got {target!r}")
    wanted = {name: parallelism.get(name, count) for name, count in components.items()}
    total = sum(wanted.values())
    if containers is None:
        target = min(target, total)  # fewer instances than containers: drop the last ones
    if target > total:
        raise PackingError(f"{target} containers for {total} instances: a container would "
                           "be empty; ask for at most as many containers as instances")

    by_component: dict[str, list[tuple[int, InstancePlan]]] = {}
    for cid, inst in current.instances():
        by_component.setdefault(inst.component, []).append((cid, inst))
    next_id = max((inst.task_id for _, inst in current.instances()), default=0) + 1
    task_ids: dict[str, list[int]] = {}
    kept: list[tuple[int, InstancePlan]] = []
    new: list[tuple[str, int, int]] = []  # (component, task id, component index)
    for name in sorted(wanted):
        placed = sorted(by_component.get(name, []), key=lambda ci: ci[1].component_index)
        survivors = placed[:wanted[name]]
        kept.extend(survivors)
        ids = [inst.task_id for _, inst in survivors]
        for index in range(len(survivors), wanted[name]):
            new.append((name, next_id, index))
            ids.append(next_id)
            next_id += 1
        task_ids[name] = ids
    resources = component_resources(conf, task_ids)

    plan = [ContainerPlan(id=i + 1) for i in range(target)]
    homeless: list[InstancePlan] = []
    for cid, inst in kept:
        if cid <= target:
            plan[cid - 1].instances.append(inst)
        else:
            homeless.append(inst)
    homeless.extend(InstancePlan(name, task, index, resources[name]) for name, task, index in new)
    for inst in homeless:
        least = min(plan, key=lambda c: (len(c.instances), c.id))
        least.instances.append(inst)
    # a container emptied by shrinking takes one instance from the most loaded one
    for empty in [c for c in plan if not c.instances]:
        fullest = max(plan, key=lambda c: (len(c.instances), -c.id))
        fullest.instances.sort(key=lambda i: i.task_id)
        empty.instances.append(fullest.instances.pop())
    size = Resource.largest(c.used for c in plan) + padding(conf)
    for container in plan:
        container.required = size
        container.instances.sort(key=lambda i: i.task_id)
    return PackingPlan(f"{topology_name}-{uuid.uuid4().hex[:12]}", plan)


def moved_tasks(before: PackingPlan, after: PackingPlan) -> dict[str, list[int]]:
    """What changes: task ids ``added``, ``removed`` and ``moved`` between containers."""
    old, new = before.container_of(), after.container_of()
    return {"added": sorted(set(new) - set(old)), "removed": sorted(set(old) - set(new)),
            "moved": sorted(t for t in set(old) & set(new) if old[t] != new[t])}
