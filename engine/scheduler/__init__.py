"""Schedulers: each cluster manager's plug-in (Heron's ``heron/schedulers``), every one an
:class:`engine.spi.Scheduler`.

``local`` runs a topology's executors as processes on this machine (engine/scheduler/
local.py), ``slurm`` one Slurm job per container (slurm/), ``kubernetes`` two StatefulSets
(kubernetes/). The local and Slurm schedulers run as a service detached from the CLI
(``python -m engine.scheduler``, service.py); the Kubernetes one runs in the CLI process,
as Heron's does. ``heron.class.scheduler`` picks one (registry.py).

This file imports none of them: each is imported from its own module, so loading one
(or the CLI naming a plug-in's errors) loads no other.
"""
