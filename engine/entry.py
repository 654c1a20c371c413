"""The engines' public entry points: how code outside ``engine/`` runs a topology.

The API (``compat/``) imports no engine. The one exception is Summingbird's streaming
platform (``compat.summingbird.platforms.streaming``), which, as Summingbird's own
``summingbird-storm`` does, plans a job into a topology and runs it on an engine; it
calls the functions here and nothing else of ``engine/``, so the engines can change
inside without the API noticing.

- :func:`storm_topology_run`: a Storm-API ``Topology`` class on the ``storm`` engine
  (Storm's model in this process, :mod:`engine.storm`);
- :func:`heron_project_run`: a project's topology on the ``heron`` engine, its real
  processes on this machine under the local scheduler (``heron run --engine heron``).

Both return a run whose ``run(time_limit=..., on_progress=...)`` blocks until the
topology finishes, the time limit passes or a task fails, and returns how it ended
(:class:`EngineRun`, :class:`RunOutcome`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from compat.storm_api.project import resolve_options
from engine.common.launch import Submission
from engine.common.local_run import HeronLocalRun
from engine.common.plan.compiler import compile_topology
from engine.common.runtime.stats import ComponentStats
from engine.common.submission import load_topology
from engine.storm import LocalCluster

__all__ = ["EngineRun", "ProgressCallback", "RunOutcome", "heron_project_run",
           "storm_topology_run"]

#: called while a run goes, with every component's counters and the seconds elapsed
ProgressCallback = Callable[[dict[str, ComponentStats], float], None]


class RunOutcome(Protocol):
    """How a run ended (``LocalCluster``'s ``RunResult``, ``HeronLocalRun``'s
    ``HeronRunResult``)."""

    #: "finished", "time limit", "interrupted" or "error"
    reason: str
    #: what went wrong when ``reason`` is "error"
    error: str | None
    #: component -> its counters (emitted, acked, failed, restarts...)
    components: dict[str, ComponentStats]
    elapsed: float


class EngineRun(Protocol):
    """A topology on an engine, run to its end by :meth:`run`."""

    def run(self, time_limit: float | None = None,
            on_progress: ProgressCallback | None = None) -> RunOutcome:
        """Run until finished, ``time_limit`` seconds (None or 0: no limit) or Ctrl-C;
        ``on_progress`` is called while it goes (an exception from it ends the run)."""
        ...


def storm_topology_run(topology: type[Any], *, name: str, log_dir: Path) -> LocalCluster:
    """A run of the Storm-API ``Topology`` class ``topology`` on the ``storm`` engine,
    named ``name``, with its task logs in ``log_dir``.

    The options are the topology class's own ``config`` over Storm's defaults, as ``heron
    run`` resolves them for a project without environment or command-line options. The
    run is compiled (a bad topology raises ``PlanningError`` here) but not started: its
    ``run()`` starts it in this process. (The user's class is looked up by attribute, so
    held as ``type[Any]``: the engine may not import the API's ``Topology``.)
    """
    options = resolve_options({}, topology.config, {})
    compiled = compile_topology(topology, name=name, config=options)
    return LocalCluster(compiled, log_dir=log_dir)


def heron_project_run(project: Path, *, name: str, working_dir: Path) -> HeronLocalRun:
    """Start the topology ``name`` of the project at ``project`` on the ``heron`` engine:
    submitted to a private local state manager under ``working_dir``, its processes
    started by the local scheduler (pid files in ``working_dir / "pids"``, logs beside
    them), as ``heron run --engine heron`` does. ``run()`` then waits for its end.

    Loading the project puts its directories on ``sys.path`` for the instances only: the
    caller's ``sys.path`` is left as it was.
    """
    saved_path = list(sys.path)
    try:
        loaded = load_topology(project, name=name)
    finally:
        sys.path[:] = saved_path
    submission = Submission(project=str(project), name=name)
    run = HeronLocalRun(loaded, submission, working_dir=working_dir)
    run.start()
    return run
