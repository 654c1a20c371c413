"""Schedulers: each cluster manager's plug-in (Heron's ``heron/schedulers``), every one an
:class:`engine.spi.Scheduler`.

``local`` runs a topology's executors as processes on this machine, ``slurm`` one Slurm
job per container, ``kubernetes`` two StatefulSets. The local and Slurm schedulers run
as a service detached from the CLI (``python -m engine.scheduler``,
engine/scheduler/service.py); the Kubernetes one runs in the CLI process, as Heron's
does. ``heron.class.scheduler`` picks one: :data:`SCHEDULERS`, :func:`scheduler_for`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.scheduler.kubernetes.scheduler import KubernetesScheduler
from engine.scheduler.local import EXECUTOR_STOP_GRACE_SECS, LocalScheduler
from engine.scheduler.slurm.scheduler import SlurmScheduler
from engine.spi import Scheduler, ServiceScheduler

if TYPE_CHECKING:
    from engine.launch import LaunchSpec

#: ``heron.class.scheduler`` value (engine.cluster.config, which also maps Heron's class
#: names to these) -> the plug-in
SCHEDULERS: dict[str, type[Scheduler]] = {"local": LocalScheduler, "slurm": SlurmScheduler,
                                          "kubernetes": KubernetesScheduler}
#: the schedulers the scheduler service runs; the others run in the CLI
SERVICE_SCHEDULERS: dict[str, type[ServiceScheduler]] = {"local": LocalScheduler,
                                                         "slurm": SlurmScheduler}


def runs_as_service(scheduler: str) -> bool:
    """True when ``heron submit`` starts ``python -m engine.scheduler`` for it."""
    return scheduler in SERVICE_SCHEDULERS


def scheduler_for(spec: "LaunchSpec", state: Any) -> ServiceScheduler:
    """The scheduler plug-in the launch spec names (``heron.class.scheduler`` of the
    cluster it was submitted to), for the scheduler service: the local one, or Slurm's."""
    plugin = SERVICE_SCHEDULERS.get(spec.scheduler)
    if plugin is None:
        raise ValueError(f"the {spec.scheduler} scheduler does not run as a service")
    return plugin(spec, state=state)


__all__ = ["EXECUTOR_STOP_GRACE_SECS", "KubernetesScheduler", "LocalScheduler", "SCHEDULERS",
           "SERVICE_SCHEDULERS", "Scheduler", "ServiceScheduler", "SlurmScheduler",
           "runs_as_service", "scheduler_for"]
