"""Which scheduler plug-in a topology runs under: a dictionary from the value of
``heron.class.scheduler`` to the class (engine.common.cluster.config maps Heron's class names to
these values). Kept out of the package's ``__init__`` so that importing one plug-in (or
its errors, as the CLI does) loads no other, and each plug-in is named by where it lives
and imported when a topology asks for it: the local scheduler service starts with every
local topology, and Slurm's packaging and uploader and Kubernetes' manifests would
otherwise cost each start about 0.3 s of CPU."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol, cast

from engine.spi import Scheduler, ServiceScheduler
from engine.spi.statemgr import StateManager

if TYPE_CHECKING:
    from engine.common.launch import LaunchSpec


class ServiceSchedulerClass(Protocol):
    """A service scheduler plug-in's class: built from the launch spec and its state."""

    def __call__(self, spec: LaunchSpec, *, state: StateManager) -> ServiceScheduler: ...


#: ``heron.class.scheduler`` value (engine.common.cluster.config, which also maps Heron's class
#: names to these) -> the plug-in, as ``module:class``
SCHEDULERS: dict[str, str] = {"local": "engine.scheduler.local:LocalScheduler",
                              "slurm": "engine.scheduler.slurm.scheduler:SlurmScheduler",
                              "kubernetes":
                                  "engine.scheduler.kubernetes.scheduler:KubernetesScheduler"}
#: the schedulers the scheduler service runs; the others run in the CLI
SERVICE_SCHEDULERS = frozenset({"local", "slurm"})


def scheduler_class(scheduler: str) -> type[Scheduler]:
    """The plug-in's class, imported now (KeyError for a name ``SCHEDULERS`` lacks)."""
    module, _, name = SCHEDULERS[scheduler].partition(":")
    return cast("type[Scheduler]", getattr(importlib.import_module(module), name))


def runs_as_service(scheduler: str) -> bool:
    """True when ``heron submit`` starts ``python -m engine.scheduler`` for it."""
    return scheduler in SERVICE_SCHEDULERS


def scheduler_for(spec: LaunchSpec, state: StateManager) -> ServiceScheduler:
    """The scheduler plug-in the launch spec names (``heron.class.scheduler`` of the
    cluster it was submitted to), for the scheduler service: the local one, or Slurm's."""
    if spec.scheduler not in SERVICE_SCHEDULERS:
        raise ValueError(f"the {spec.scheduler} scheduler does not run as a service")
    plugin = cast(ServiceSchedulerClass, scheduler_class(spec.scheduler))
    return plugin(spec, state=state)


__all__ = ["SCHEDULERS", "SERVICE_SCHEDULERS", "runs_as_service", "scheduler_class",
           "scheduler_for"]
