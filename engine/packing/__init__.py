"""Packing: which instances (tasks) run in which container, and how big each container is.

Round-robin is Heron's default; first-fit-decreasing minimises the number of containers
for the resources components declare. Both produce the same :class:`PackingPlan`, which
converts to and from Heron's ``PackingPlan`` message.
"""

from engine.packing.errors import PackingError
from engine.packing.ffd import pack_first_fit_decreasing
from engine.packing.plan import ContainerPlan, InstancePlan, PackingPlan
from engine.packing.resources import Resource, component_resources
from engine.packing.round_robin import pack_round_robin

ALGORITHMS = {"round_robin": pack_round_robin, "first_fit_decreasing": pack_first_fit_decreasing}

__all__ = ["ALGORITHMS", "ContainerPlan", "InstancePlan", "PackingError", "PackingPlan",
           "Resource", "component_resources", "pack_first_fit_decreasing", "pack_round_robin"]
