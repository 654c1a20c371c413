"""Failure injection on the ``heron`` engine: a task's process kills itself at its N-th tuple.

The ``heron`` engine runs every task in an OS process of its own, which rebuilds the
topology from the submitted project. To crash one task at a chosen tuple the harness
writes a small wrapper project for the run (:func:`wrap_project_for_kill`, the same way
:mod:`conformance.fixture_spout` wraps spouts): its topology file imports the case's
topology and rebuilds it with :func:`kill_topology`, where the target bolt's class is
replaced by a subclass (:class:`KillOnTupleMixin` first in its bases) whose ``process()``
counts the tuples of the component's first task (ticks are not counted: they go to
``process_tick``) and, at the ``after``-th, before the user's code sees it:

1. creates the run's marker file (``O_EXCL``: exactly one kill per run, however often
   the process is restarted) with what is being killed and when;
2. flushes the task's capture file (the harness's record of what the task emitted
   before it died; the engine's own buffers, unsent emits and acks, are lost);
3. sends itself ``SIGKILL``: nothing is acked or failed, the process is gone as after a
   worker crash. Its container's executor restarts it; the new process sees the marker
   and runs unarmed, and under at-least-once the lost roots time out and replay.

The rest comes through topology options (``-o``), so the wrapper file only names the
component: ``conformance.kill.after`` (the tuple), ``conformance.kill.marker`` (the
marker file) and optionally ``conformance.kill.task`` (default: the component's lowest
task id, the task :class:`conformance.engines.StormAdapter` kills).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from compat.storm_api.tuple import Tuple
from conformance.wrapping import load_original_topology, write_wrapper_project

__all__ = ["KILL_AFTER", "KILL_COMPONENT", "KILL_MARKER", "KILL_TASK", "KillOnTupleMixin",
           "KillWrapError", "kill_topology", "read_marker", "wrap_project_for_kill"]

KILL_COMPONENT = "conformance.kill.component"
KILL_AFTER = "conformance.kill.after"
KILL_TASK = "conformance.kill.task"
KILL_MARKER = "conformance.kill.marker"

#: the module name prefix the original topology is imported under (``isolated_imports``
#: forgets modules starting with ``_conformance_original_``)
_MODULE_PREFIX = "_conformance_original_kill_"


class KillWrapError(ValueError):
    """The component cannot be wrapped for a kill (names it and why)."""


class _KillSwitch:
    """The armed state of the one task that is to die."""

    def __init__(self, component: str | None, task: int, after: int, marker: Path) -> None:
        self.component = component
        self.task = task
        self.after = after
        self.marker = marker
        self.seen = 0

    @classmethod
    def arm(cls, conf: dict[str, Any], context: dict[str, Any], component: str | None,
            task: Any) -> _KillSwitch | None:
        marker, after = conf.get(KILL_MARKER), conf.get(KILL_AFTER)
        if not marker or after is None:
            return None
        marker = Path(marker)
        if marker.exists():  # this is the restarted process: the kill has happened
            return None
        chosen = conf.get(KILL_TASK)
        if chosen is None:
            mapping = context.get("task->component", {})
            tasks = sorted(int(t) for t, c in mapping.items() if c == component)
            if not tasks:
                return None
            chosen = tasks[0]
        if task is None or int(task) != int(chosen):
            return None
        return cls(component, int(task), max(1, int(after)), marker)

    def tuple_arrived(self, component: Any) -> bool:
        """Count one tuple; at the ``after``-th, kill this process (never returns then).
        Returns False when this switch is spent."""
        self.seen += 1
        if self.seen < self.after:
            return True
        record = {"component": self.component, "task": self.task, "tuple": self.seen,
                  "pid": os.getpid(), "time": time.time()}
        try:
            fd = os.open(self.marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        logger = getattr(component, "logger", None)
        if logger is not None:
            logger.warning("heron-conformance: killing this process (pid %d, SIGKILL) at "
                           "tuple %d of %s task %d, before processing it", os.getpid(),
                           self.seen, self.component, self.task)
            for handler in getattr(logger, "handlers", ()):
                handler.flush()
        _flush_capture(component)
        sys.stdout.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
        while True:  # pragma: no cover - SIGKILL is not caught; wait for it to land
            time.sleep(1)


def _flush_capture(component: Any) -> None:
    """Write out what the harness has captured of this task so far (the capture is the
    harness's observation of emits, not part of the engine's state, so it is not lost
    with the process)."""
    collector = getattr(component, "_collector", None)
    capture = getattr(collector, "capture", None)
    write = getattr(capture, "write_summary", None)
    if write is not None:
        try:
            write()
        except Exception as exc:  # noqa: BLE001 - best effort: the process dies next
            logger = getattr(component, "logger", None)
            if logger is not None:
                logger.error("heron-conformance: cannot flush the capture before the kill: "
                             "%s", exc)


class KillOnTupleMixin:
    """Put before a Python bolt class: the first task of the component kills its own
    process at its ``conformance.kill.after``-th tuple (see the module docstring)."""

    _conformance_kill: _KillSwitch | None = None

    def initialize(self, stormconf: dict, context: dict) -> None:
        task = getattr(self, "task_id", None)
        if task in (None, ""):
            task = context.get("taskid")
        name = getattr(self, "component_name", None) or context.get("componentid")
        self._conformance_kill = _KillSwitch.arm(stormconf, context, name, task)
        # a mixin: the user's bolt class after it in the bases defines these
        super().initialize(stormconf, context)  # type: ignore[misc]

    def process(self, tup: Tuple) -> Any:
        switch = self._conformance_kill
        if switch is not None and not switch.tuple_arrived(self):
            self._conformance_kill = None
        # (the user's bolt class's process)
        return super().process(tup)  # type: ignore[misc]


def kill_topology(topology_file: str | Path, component: str, *, module: str = __name__) -> type:
    """The topology of ``topology_file`` rebuilt with bolt ``component``'s class
    replaced by a :class:`KillOnTupleMixin` subclass; every other spec, the names,
    groupings, parallelism and config are the original's."""
    import simplejson

    # the user's Topology class: compat.storm_api's or streamparse's
    topology_cls: Any = _load_original(Path(topology_file))
    body: dict[str, Any] = {"__module__": module, "config": dict(topology_cls.config or {})}
    found = False
    for spec in topology_cls.specs:
        if spec.name != component:
            body[spec.name] = spec
            continue
        found = True
        user_cls = spec.component_cls
        spout_names = getattr(topology_cls, "thrift_spouts", None) or {}
        if spec.name in spout_names or type(spec).__name__.endswith("SpoutSpec"):
            raise KillWrapError(f"component {component!r} is a spout; only bolts are killed")
        foreign = type(spec).__name__.startswith(("Java", "Shell"))  # not PythonBoltSpec
        if foreign or not isinstance(user_cls, type) \
                or not callable(getattr(user_cls, "process", None)):
            raise KillWrapError(f"bolt {component!r} is not a Python bolt class "
                                f"({user_cls!r}); only Python bolts can be killed on heron")
        # a subclass of the user's bolt class: its DSL's spec()
        killing: Any = type(f"Killing_{spec.name}", (KillOnTupleMixin, user_cls),
                            {"__module__": module})
        config = simplejson.loads(spec.config) if spec.config else None
        body[spec.name] = killing.spec(name=spec.name, inputs=dict(spec.inputs),
                                       par=spec.par, config=config)
    if not found:
        raise KillWrapError(f"no component {component!r} in topology "
                            f"{topology_cls.__name__} of {topology_file}")
    return type(topology_cls)(f"{topology_cls.__name__}Killing", topology_cls.__bases__, body)


def _load_original(path: Path) -> type:
    return load_original_topology(path, _MODULE_PREFIX, KillWrapError)


_TOPOLOGY_TEMPLATE = '''"""Generated by heron-conformance: {topology_file} with bolt {component!r}
killing its own process (first task) at a chosen tuple (options conformance.kill.*).

Delete this directory freely.
"""

from conformance.kill_wrapper import kill_topology

{class_name} = kill_topology({topology_file!r}, {component!r}, module=__name__)
'''


def wrap_project_for_kill(project: Path, topology_file: Path, component: str,
                          out: Path) -> Path:
    """Write the wrapper project into ``out`` (created); returns its directory.

    The topology file sits where the original sits relative to its project (so it
    keeps its name); ``src`` and ``config.json`` / ``heron.yaml`` are symbolic links to
    the original project's."""
    text = _TOPOLOGY_TEMPLATE.format(
        topology_file=str(Path(topology_file).resolve()), component=component,
        class_name="ConformanceKillTopology")
    return write_wrapper_project(project, topology_file, out, text)


def read_marker(path: Path) -> dict[str, Any] | None:
    """What the killed process recorded before dying; None when it never fired."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
