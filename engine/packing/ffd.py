"""Heron's FirstFitDecreasingPacking: as few containers as the declared resources allow.

Instances are sorted by RAM, largest first (ties: CPU, then component and index), and
each goes into the first container with room. A container holds at most the maximum
container size (``topology.container.max.{ram,cpu,disk}.hint``, default four default
instances, Heron's default density) less ``topology.container.padding.percentage``
(default 10). An instance larger than a whole container is an error naming it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from engine.common.plan.logical import LogicalPlan
from engine.config.containers import max_container_hints, padding_percentage
from engine.packing.tasks import assign_task_ids
from engine.spi import Packing
from engine.spi.packing_errors import PackingError
from engine.spi.packing_plan import ContainerPlan, InstancePlan, PackingPlan
from engine.spi.resources import (
    DEFAULT_INSTANCE_CPU,
    DEFAULT_INSTANCE_DISK,
    DEFAULT_INSTANCE_RAM,
    Resource,
    component_resources,
)

INSTANCES_PER_CONTAINER = 4


def max_container(conf: Mapping[str, Any]) -> Resource:
    """The largest container: its hints, else four default instances (Heron's density)."""
    hints = max_container_hints(conf)
    return Resource(
        hints.ram if hints.ram is not None else INSTANCES_PER_CONTAINER * DEFAULT_INSTANCE_RAM,
        hints.cpu if hints.cpu is not None else INSTANCES_PER_CONTAINER * DEFAULT_INSTANCE_CPU,
        hints.disk if hints.disk is not None else
        INSTANCES_PER_CONTAINER * DEFAULT_INSTANCE_DISK)


def pack_first_fit_decreasing(plan: LogicalPlan,
                              conf: Mapping[str, Any] | None = None) -> PackingPlan:
    conf = dict(plan.config) if conf is None else conf
    task_ids = assign_task_ids(plan)
    resources = component_resources(conf, task_ids)
    pad = padding_percentage(conf)
    limit = max_container(conf)
    capacity = limit.scaled(1 - pad / 100)
    instances = [InstancePlan(component, task, index, resources[component])
                 for component, ids in task_ids.items() for index, task in enumerate(ids)]
    instances.sort(key=lambda i: (-i.resource.ram, -i.resource.cpu, i.component, i.component_index))
    containers: list[ContainerPlan] = []
    for inst in instances:
        if not inst.resource.fits_in(capacity):
            raise PackingError(
                f"component {inst.component!r}: one instance needs {_describe(inst.resource)}, "
                f"more than a container can hold ({_describe(capacity)} after "
                f"{pad:g}% padding); raise topology.container.max.*.hint or lower the "
                "component's declared resources")
        for container in containers:
            if (container.used + inst.resource).fits_in(capacity):
                container.instances.append(inst)
                break
        else:
            containers.append(ContainerPlan(id=len(containers) + 1, instances=[inst]))
    for container in containers:
        container.required = container.used.scaled(1 + pad / 100)
    return PackingPlan(f"{plan.name}-{uuid.uuid4().hex[:12]}", containers)


def _describe(r: Resource) -> str:
    return f"ram {r.ram / 2**20:.0f} MiB, cpu {r.cpu:g}, disk {r.disk / 2**20:.0f} MiB"


class FirstFitDecreasingPacking(Packing):
    """The :class:`~engine.spi.Packing` plug-in ``first_fit_decreasing``."""

    def pack(self, plan: LogicalPlan, conf: Mapping[str, Any]) -> PackingPlan:
        return pack_first_fit_decreasing(plan, conf)
