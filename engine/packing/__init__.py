"""Packing: which instances (tasks) run in which container, and how big each container is.

Round-robin is Heron's default; first-fit-decreasing minimises the number of containers
for the resources components declare. Both implement :class:`engine.spi.Packing` and
produce the same :class:`PackingPlan`, which converts to and from Heron's
``PackingPlan`` message. ``topology.packing.algorithm`` picks one (:func:`packing_for`).
"""

from collections.abc import Mapping
from typing import Any

from engine.common.plan.logical import LogicalPlan
from engine.packing.ffd import FirstFitDecreasingPacking, pack_first_fit_decreasing
from engine.packing.round_robin import RoundRobinPacking, pack_round_robin
from engine.spi import Packing
from engine.spi.packing_errors import PackingError
from engine.spi.packing_plan import ContainerPlan, InstancePlan, PackingPlan
from engine.spi.resources import Resource, component_resources

PACKING_KEY = "topology.packing.algorithm"
#: ``topology.packing.algorithm`` value -> the plug-in
PACKINGS: dict[str, type[Packing]] = {"round_robin": RoundRobinPacking,
                                      "first_fit_decreasing": FirstFitDecreasingPacking}
ALGORITHMS = {"round_robin": pack_round_robin, "first_fit_decreasing": pack_first_fit_decreasing}


def packing_for(config: Mapping[str, Any]) -> Packing:
    """The packing plug-in ``topology.packing.algorithm`` names (default round-robin)."""
    algorithm = str(config.get(PACKING_KEY) or "round_robin").lower().replace("-", "_")
    packing = PACKINGS.get(algorithm)
    if packing is None:
        raise PackingError(f"{PACKING_KEY}: unknown packing algorithm {algorithm!r}; "
                           f"choose one of {', '.join(sorted(PACKINGS))}")
    return packing()


def pack(plan: LogicalPlan) -> PackingPlan:
    """The packing plan of ``plan`` under its own config."""
    return packing_for(plan.config).pack(plan, dict(plan.config))


__all__ = ["ALGORITHMS", "ContainerPlan", "FirstFitDecreasingPacking", "InstancePlan",
           "PACKINGS", "PACKING_KEY", "Packing", "PackingError", "PackingPlan", "Resource",
           "RoundRobinPacking", "component_resources", "pack", "pack_first_fit_decreasing",
           "pack_round_robin", "packing_for"]
