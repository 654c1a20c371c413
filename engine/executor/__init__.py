"""Heron's executor: one per container, it starts, monitors and restarts the container's
processes (Topology Master in container 0; Stream Manager, Metrics Manager and one
instance per task elsewhere) and stops them in order on SIGTERM."""

from engine.executor.commands import (
                                      MODULES,
                                      OVERRIDES_ENV,
                                      container_processes,
                                      executor_process,
                                      resolve_modules,
                                      stop_stages,
)

__all__ = ["MODULES", "OVERRIDES_ENV", "container_processes", "executor_process",
           "resolve_modules", "stop_stages"]
