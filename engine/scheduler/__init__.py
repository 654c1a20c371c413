"""Schedulers: each cluster manager's plug-in (Heron's ``heron/schedulers``), every one an
:class:`engine.spi.Scheduler`.

``local`` runs a topology's executors as processes on this machine (engine/scheduler/
local.py), ``slurm`` one Slurm job per container (slurm/), ``kubernetes`` two StatefulSets
(kubernetes/). The local and Slurm schedulers run as a service detached from the CLI
(``python -m engine.scheduler``, service.py); the Kubernetes one runs in the CLI process,
as Heron's does. ``heron.class.scheduler`` picks one (registry.py).
"""

from engine.scheduler.local import EXECUTOR_STOP_GRACE_SECS, LocalScheduler

__all__ = ["EXECUTOR_STOP_GRACE_SECS", "LocalScheduler"]
