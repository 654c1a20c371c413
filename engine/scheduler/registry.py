"""Which scheduler plug-in a topology runs under: a dictionary from the value of
``heron.class.scheduler`` to the class (engine.common.cluster.config maps Heron's class names to
these values). Kept out of the package's ``__init__`` so that importing one plug-in (or
its errors, as the CLI does) loads no other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from engine.scheduler.kubernetes.scheduler import KubernetesScheduler
from engine.scheduler.local import LocalScheduler
from engine.scheduler.slurm.scheduler import SlurmScheduler
from engine.spi import Scheduler, ServiceScheduler

if TYPE_CHECKING:
    from engine.common.launch import LaunchSpec


class ServiceSchedulerClass(Protocol):
    """A service scheduler plug-in's class: built from the launch spec and its state."""

    def __call__(self, spec: LaunchSpec, *, state: Any) -> ServiceScheduler: ...


#: ``heron.class.scheduler`` value (engine.common.cluster.config, which also maps Heron's class
#: names to these) -> the plug-in
SCHEDULERS: dict[str, type[Scheduler]] = {"local": LocalScheduler, "slurm": SlurmScheduler,
                                          "kubernetes": KubernetesScheduler}
#: the schedulers the scheduler service runs; the others run in the CLI
SERVICE_SCHEDULERS: dict[str, ServiceSchedulerClass] = {"local": LocalScheduler,
                                                        "slurm": SlurmScheduler}


def runs_as_service(scheduler: str) -> bool:
    """True when ``heron submit`` starts ``python -m engine.scheduler`` for it."""
    return scheduler in SERVICE_SCHEDULERS


def scheduler_for(spec: LaunchSpec, state: Any) -> ServiceScheduler:
    """The scheduler plug-in the launch spec names (``heron.class.scheduler`` of the
    cluster it was submitted to), for the scheduler service: the local one, or Slurm's."""
    plugin = SERVICE_SCHEDULERS.get(spec.scheduler)
    if plugin is None:
        raise ValueError(f"the {spec.scheduler} scheduler does not run as a service")
    return plugin(spec, state=state)


__all__ = ["SCHEDULERS", "SERVICE_SCHEDULERS", "runs_as_service", "scheduler_for"]
