"""How many CPUs and how much memory each container's Slurm job asks for.

Every container is sized from the packing plan and the documented keys, container 0
included (it runs the Topology Master and the Metrics Manager and holds no instance, so it
asks for the padding alone). A request Slurm can never place names the keys to change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from engine.config.containers import padding
from engine.spi.packing_plan import PackingPlan
from engine.spi.resources import Resource

#: the keys that size a container's job, named in every "cannot be placed" error
SIZING_KEYS = ("heron.resources.instance.ram", "heron.resources.instance.cpu",
               "topology.container.padding.ram", "topology.container.padding.cpu",
               "heron.slurm.container.cpus", "heron.slurm.container.memory.mb")
#: defaults of the two Slurm minimums (scheduler.yaml)
DEFAULT_MIN_CPUS = 1
DEFAULT_MIN_MEMORY_MB = 256


def container_resources(packing: PackingPlan | None, container: int,
                        topology_config: Mapping[str, Any],
                        scheduler_config: Mapping[str, Any]) -> tuple[int, int]:
    """(CPUs, MiB) for ``container``'s job: what the packing plan asks for it (container
    0: the topology's padding), never below the ``heron.slurm.container.*`` minimums."""
    required = _required(packing, container, topology_config)
    cpus = max(1, math.ceil(required.cpu - 1e-9))
    mem_mb = max(1, math.ceil(required.ram / (1 << 20)))
    cpus = max(cpus, int(scheduler_config.get("heron.slurm.container.cpus",
                                              DEFAULT_MIN_CPUS)))
    mem_mb = max(mem_mb, int(scheduler_config.get("heron.slurm.container.memory.mb",
                                                  DEFAULT_MIN_MEMORY_MB)))
    return cpus, mem_mb


def _required(packing: PackingPlan | None, container: int,
              topology_config: Mapping[str, Any]) -> Resource:
    if container != 0 and packing is not None:
        for plan in packing.containers:
            if plan.id == container:
                return plan.required
    pad = padding(topology_config)
    return Resource(ram=pad.ram, cpu=pad.cpu)


def grew(before: tuple[int, int], after: tuple[int, int]) -> bool:
    """Whether a container's job must be resubmitted to get what its new plan asks."""
    return after[0] > before[0] or after[1] > before[1]


def placement_hint(container: int, cpus: int, mem_mb: int) -> str:
    """What to change when Slurm cannot place a container's job."""
    return (f"container {container} asks for {cpus} CPUs and {mem_mb} MiB, sized from "
            f"{', '.join(SIZING_KEYS)}; lower them (or the parallelism per container) to "
            f"fit the cluster's nodes")
