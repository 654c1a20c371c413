"""The packing plan model and its protobuf form (Heron's ``PackingPlan``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from engine.messages import packing_plan_pb2
from engine.spi.resources import Resource


@dataclass(frozen=True)
class InstancePlan:
    component: str
    task_id: int
    component_index: int
    resource: Resource


@dataclass
class ContainerPlan:
    id: int
    instances: list[InstancePlan] = field(default_factory=list)
    required: Resource = Resource()
    scheduled: Resource | None = None

    @property
    def used(self) -> Resource:
        total = Resource()
        for inst in self.instances:
            total = total + inst.resource
        return total


@dataclass
class PackingPlan:
    id: str
    containers: list[ContainerPlan]

    def instances(self) -> Iterator[tuple[int, InstancePlan]]:
        for container in self.containers:
            for inst in container.instances:
                yield container.id, inst

    def container_of(self) -> dict[int, int]:
        """task id -> container id"""
        return {inst.task_id: cid for cid, inst in self.instances()}

    def to_proto(self) -> packing_plan_pb2.PackingPlan:
        msg = packing_plan_pb2.PackingPlan(id=self.id)
        for container in self.containers:
            c = msg.container_plans.add(id=container.id)
            _set_resource(c.required_resource, container.required)
            if container.scheduled is not None:
                _set_resource(c.scheduled_resource, container.scheduled)
            for inst in container.instances:
                i = c.instance_plans.add(component_name=inst.component, task_id=inst.task_id,
                                         component_index=inst.component_index)
                _set_resource(i.resource, inst.resource)
        return msg

    @classmethod
    def from_proto(cls, msg: packing_plan_pb2.PackingPlan) -> PackingPlan:
        containers = []
        for c in msg.container_plans:
            containers.append(ContainerPlan(
                id=c.id,
                instances=[InstancePlan(i.component_name, i.task_id, i.component_index,
                                        _resource(i.resource)) for i in c.instance_plans],
                required=_resource(c.required_resource),
                scheduled=(_resource(c.scheduled_resource)
                           if c.HasField("scheduled_resource") else None)))
        return cls(msg.id, containers)


def _set_resource(target: packing_plan_pb2.Resource, resource: Resource) -> None:
    target.ram = resource.ram
    target.cpu = resource.cpu
    target.disk = resource.disk


def _resource(msg: packing_plan_pb2.Resource) -> Resource:
    return Resource(msg.ram, msg.cpu, msg.disk)
