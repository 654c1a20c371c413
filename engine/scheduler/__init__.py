"""Schedulers: start a topology's containers (one executor each) and keep them running.

The local scheduler runs executors as processes on this machine, in the CLI process
(library mode, ``heron run``) or as a detached service (``heron submit``)."""

from engine.scheduler.detached import SchedulerStartError, start_detached, wait_until_serving
from engine.scheduler.local import EXECUTOR_STOP_GRACE_SECS, LocalScheduler

__all__ = ["EXECUTOR_STOP_GRACE_SECS", "LocalScheduler", "SchedulerStartError",
           "start_detached", "wait_until_serving"]
