"""Heron's RoundRobinPacking: instances dealt over a fixed number of containers.

The container count is ``topology.stmgrs`` (Heron) or ``topology.workers`` (Storm), at
least 1 and at most the number of instances. Components are dealt in order of declared
RAM, largest first (ties: CPU, then name), and every container is sized like the largest
one plus padding, as Heron does.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from engine.common.plan.logical import LogicalPlan
from engine.config.containers import padding as container_padding
from engine.packing.tasks import assign_task_ids
from engine.spi import Packing
from engine.spi.packing_errors import PackingError
from engine.spi.packing_plan import ContainerPlan, InstancePlan, PackingPlan
from engine.spi.resources import Resource, component_resources


def container_count(conf: Mapping[str, Any], instances: int) -> int:
    for key in ("topology.stmgrs", "topology.workers"):
        value = conf.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise PackingError(f"{key} must be a positive int, got {value!r}")
        return min(value, instances)
    return 1


def padding(conf: Mapping[str, Any]) -> Resource:
    """Room beside the instances for the Stream Manager and the Metrics Manager."""
    pad = container_padding(conf)
    return Resource(ram=pad.ram, cpu=pad.cpu, disk=pad.disk)


def pack_round_robin(plan: LogicalPlan, conf: Mapping[str, Any] | None = None) -> PackingPlan:
    conf = dict(plan.config) if conf is None else conf
    task_ids = assign_task_ids(plan)
    resources = component_resources(conf, task_ids)
    total = sum(len(ids) for ids in task_ids.values())
    if total == 0:
        raise PackingError(f"topology {plan.name!r} has no instances to pack")
    n = container_count(conf, total)
    containers = [ContainerPlan(id=i + 1) for i in range(n)]
    order = sorted(task_ids, key=lambda c: (-resources[c].ram, -resources[c].cpu, c))
    slot = 0
    for component in order:
        for index, task in enumerate(task_ids[component]):
            containers[slot % n].instances.append(
                InstancePlan(component, task, index, resources[component]))
            slot += 1
    size = Resource.largest(c.used for c in containers) + padding(conf)
    for container in containers:
        container.required = size
    return PackingPlan(f"{plan.name}-{uuid.uuid4().hex[:12]}", containers)


class RoundRobinPacking(Packing):
    """The :class:`~engine.spi.Packing` plug-in ``round_robin`` (Heron's default)."""

    def pack(self, plan: LogicalPlan, conf: Mapping[str, Any]) -> PackingPlan:
        return pack_round_robin(plan, conf)
