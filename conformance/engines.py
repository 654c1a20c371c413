"""Engine adapters: one interface to run a case's topology on an engine and capture
every tuple every component emitted.

``EngineAdapter.run(case, run_id=..., capture_path=..., work_dir=...)`` loads the
case's project with its fixtures as options, runs it until it ends by itself (every
spout exhausted and, under at-least-once, every tuple acked or failed), writes the
capture and says how the run ended. ``capture_path`` is a directory: each task writes
its own JSON-lines file there (:mod:`conformance.capture`), with the spout's message id
on the rows a spout emitted with one. A run that passes the case's time bound is
stopped and reported, never waited on.

- :class:`StormAdapter`: the in-process ``storm`` engine (``LocalCluster``), the
  reference. It can inject a failure: one task of a bolt crashes at its N-th tuple and
  is restarted, losing what it held, as a worker crash would.
- :class:`HeronAdapter`: the ``heron`` engine's real processes (``HeronLocalRun``),
  at-least-once included. It injects a failure by making one task's OS process kill
  itself (``SIGKILL``) at its N-th tuple; the executor restarts it
  (:mod:`conformance.kill_wrapper`).
"""

from __future__ import annotations

import abc
import contextlib
import copy
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compat.storm_api.exceptions import ComponentFailure
from conformance.capture import TaskCaptures
from conformance.catalogue.case import CAPABILITIES, Case, Kill
from conformance.kill_wrapper import (
    KILL_AFTER,
    KILL_COMPONENT,
    KILL_MARKER,
    read_marker,
    wrap_project_for_kill,
)
from engine.common.launch import Submission
from engine.common.local_run import HeronLocalRun
from engine.common.plan.logical import LogicalPlan
from engine.common.submission import LoadedTopology, load_topology
from engine.instance.capture import JsonlCapture
from engine.storm import LocalCluster, OutputCapture

__all__ = ["ENGINES", "EngineAdapter", "EngineOutput", "HarnessError", "HeronAdapter",
           "StormAdapter", "adapter_for", "isolated_imports"]


class HarnessError(Exception):
    """The harness cannot run a case on an engine (names case, engine and why)."""


class InjectedFailure(RuntimeError):
    """The failure ``--inject-failures`` (or a failure-injection case) puts into a task."""


@dataclass
class EngineOutput:
    """What one run of a case on an engine produced."""

    engine: str
    #: "finished" | "time limit" | "error"
    reason: str
    #: the run's capture directory: one JSON-lines file per task
    capture: Path
    records: int
    elapsed: float
    log_dir: Path | None = None
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.reason == "finished"


@contextlib.contextmanager
def isolated_imports(*roots: Path) -> Iterator[None]:
    """Undo what loading a project does to ``sys.path`` and ``sys.modules``.

    Projects (original and migrated copies, catalogue projects) reuse module names
    (``spouts.words``); each run must import its own files. Only modules added from
    under ``roots`` (and the fixture wrapper's copies of users' topology files) are
    forgotten: library modules imported during the run stay, so their classes keep one
    identity."""
    saved_path = list(sys.path)
    saved = set(sys.modules)
    resolved = [Path(r).resolve() for r in roots]
    try:
        yield
    finally:
        sys.path[:] = saved_path
        for name in set(sys.modules) - saved:
            module = sys.modules.get(name)
            file = getattr(module, "__file__", None)
            if name.startswith("_conformance_original_") or (
                    file and _under(Path(file), resolved)):
                del sys.modules[name]


def _under(path: Path, roots: list[Path]) -> bool:
    try:
        resolved = path.resolve()
    except OSError:
        return False
    return any(resolved == root or root in resolved.parents for root in roots)


def _project_roots(project: Path) -> list[Path]:
    project = Path(project)
    return [project, *(p for p in (project / "src", project / "topologies") if p.exists())]


def case_options(case: Case) -> dict[str, Any]:
    """The ``-o`` options of a case's run: its own, and its fixtures by spout."""
    options = dict(case.options)
    for spout, path in case.fixtures.items():
        options[f"conformance.input.{spout}"] = str(Path(path).resolve())
    return options


class EngineAdapter(abc.ABC):
    """Runs a case on one engine and captures everything it emitted."""

    name: str = ""
    #: capability tags (``conformance.catalogue.CAPABILITIES``) this engine has
    capabilities: frozenset[str] = frozenset()

    def __init__(self, *, label: str | None = None, project: Path | None = None) -> None:
        """``label`` names the adapter in results and captures (default: the engine);
        ``project`` runs that project instead of the case's (``heron-conformance
        migrate`` runs the original on one adapter, the migrated copy on another)."""
        if label:
            self.name = label
        self.project = Path(project) if project is not None else None

    def for_project(self, label: str, project: Path) -> EngineAdapter:
        """This engine under the name ``label``, running ``project`` instead of the case's
        (a case's migrated twin)."""
        twin = copy.copy(self)
        twin.name = label
        twin.project = Path(project)
        return twin

    def _variant(self, case: Case) -> Case:
        return replace(case, project=self.project) if self.project is not None else case

    def missing(self, case: Case, kill: Kill | None = None) -> list[str]:
        """The capabilities a run of ``case`` (with ``kill`` injected) needs that this
        engine lacks."""
        needed = list(case.needs())
        if kill is not None:
            needed += [t for t in ("acking", "failure-injection") if t not in needed]
        return [t for t in needed if t not in self.capabilities]

    def skip_reason(self, case: Case, kill: Kill | None = None) -> str | None:
        missing = self.missing(case, kill)
        if not missing:
            return None
        return "; ".join(f"needs capability {CAPABILITIES[t]}" for t in missing)

    @abc.abstractmethod
    def run(self, case: Case, *, run_id: str, capture_path: Path, work_dir: Path,
            kill: Kill | None = None, time_limit: float | None = None) -> EngineOutput:
        """Run ``case`` once; the capture goes to directory ``capture_path`` (one
        JSON-lines file per task), logs under ``work_dir``. Raises :class:`HarnessError`
        when the topology cannot be loaded or started; a run that fails or hangs is an
        :class:`EngineOutput` saying so."""

    # -- shared ---------------------------------------------------------------------
    def _load(self, case: Case) -> LoadedTopology:
        try:
            return load_topology(case.project, name=case.topology, env=case.env,
                                 cli_options=case_options(case), workers=case.workers)
        except Exception as exc:
            raise HarnessError(f"case {case.name} on {self.name}: cannot load topology "
                               f"{case.topology or ''} of {case.project}: {exc}") from exc

    def _time_limit(self, case: Case, time_limit: float | None) -> float:
        return float(time_limit if time_limit is not None else case.time_limit)

    def _hang(self, case: Case, limit: float, log_dir: Path | None) -> str:
        return (f"case {case.name} on engine {self.name} did not finish within {limit:g}s "
                "(the time bound): a spout never reported exhaustion (is_exhausted()) or "
                "tuples stayed in flight; bound the spouts with --max-tuples N, --input "
                f"FIXTURE or the project's own options (-o); logs in {log_dir}")


def _first_bolt(plan: LogicalPlan) -> str:
    for comp in plan.components.values():
        if comp.kind == "bolt":
            return comp.name
    raise HarnessError(f"topology {plan.name} has no bolt to inject a failure into")


class StormAdapter(EngineAdapter):
    """The ``storm`` engine: Storm's model in this process; every capability."""

    name = "storm"
    capabilities = frozenset(CAPABILITIES)

    def run(self, case: Case, *, run_id: str, capture_path: Path, work_dir: Path,
            kill: Kill | None = None, time_limit: float | None = None) -> EngineOutput:
        case = self._variant(case)
        limit = self._time_limit(case, time_limit)
        log_dir = Path(work_dir) / "logs"
        with isolated_imports(*_project_roots(case.project)):
            loaded = self._load(case)
            writer = TaskCaptures(capture_path, engine=self.name, case=case.name,
                                  run_id=run_id)
            failures: list[str] = []
            capture = OutputCapture(max_samples=0, all_streams=True, sink=writer)
            serializer = str(loaded.project.config.get("serializer") or "json")
            try:
                cluster = LocalCluster(loaded.compiled, log_dir=log_dir, capture=capture,
                                       multilang=case.multilang,
                                       shell_cwd=loaded.shell_dir,
                                       multilang_serializer=serializer,
                                       on_task_failure=failures.append)
                began = time.monotonic()
                cluster.start()
            except Exception as exc:
                writer.close()
                raise HarnessError(f"case {case.name} on {self.name}: the topology did not "
                                   f"start: {exc}; logs in {log_dir}") from exc
            metadata: dict[str, Any] = {"topology": loaded.plan.name}
            injection = self._arm_kill(cluster, kill, loaded.plan) if kill else None
            try:
                result = cluster.run(time_limit=limit)
            finally:
                writer.close()
            elapsed = time.monotonic() - began
        if result.reason == "interrupted":
            raise KeyboardInterrupt
        if injection is not None:
            metadata["injected failure"] = injection.describe()
        if failures:
            metadata["task failures"] = failures[:20]
        error = result.error
        reason = result.reason
        if reason == "time limit":
            error = self._hang(case, limit, log_dir)
        elif reason == "finished" and injection is not None and not injection.fired:
            reason, error = "error", (
                f"case {case.name} on engine {self.name}: the failure was not injected: "
                f"{injection.describe()}")
        return EngineOutput(self.name, reason, Path(capture_path), writer.count, elapsed,
                            log_dir=log_dir, error=error, metadata=metadata)

    def _arm_kill(self, cluster: LocalCluster, kill: Kill, plan: LogicalPlan) -> _StormKill:
        component = kill.component or _first_bolt(plan)
        tasks = sorted((t for t in cluster.tasks if t.component == component),
                       key=lambda t: t.task)
        if not tasks:
            cluster.stop()
            raise HarnessError(f"cannot inject a failure into {component!r}: no such bolt in "
                               f"topology {plan.name}")
        injection = _StormKill(component, tasks[0], kill.after)
        injection.arm()
        return injection


class _Killed(BaseException):
    """Unwinds user code at the moment of an injected kill. A BaseException, so the
    component's own error handling (auto-fail) never sees it: a killed process acks
    and fails nothing."""


class _StormKill:
    """Kills one task in the middle of its ``after``-th tuple (ticks not counted),
    once: right after that tuple's first emit has been delivered (or after the tuple,
    when it emits nothing). The executor restarts the task with a fresh instance; the
    killed tuple is neither acked nor failed and what the old instance held is lost, so
    under at-least-once the roots time out and are replayed, as after a worker crash."""

    def __init__(self, component: str, task: Any, after: int) -> None:
        self.component = component
        self.task = task
        self.after = max(1, int(after))
        self.seen = 0
        self.fired = False
        self.how = ""

    def arm(self) -> None:
        hosted = self.task.hosted
        collector = self.task.collector
        original_execute = hosted.execute
        original_emit = collector.emit
        dying = [False]

        def emit(*args: Any, **kwargs: Any) -> Any:
            result = original_emit(*args, **kwargs)
            if dying[0]:
                raise _Killed
            return result

        def execute(tup: Any) -> Any:
            if self.fired or tup.stream == "__tick":
                return original_execute(tup)
            self.seen += 1
            if self.seen < self.after:
                return original_execute(tup)
            self.fired = True
            dying[0] = True
            collector.emit = emit
            try:
                original_execute(tup)
                self.how = "after it (it emitted nothing)"
            except _Killed:
                self.how = "right after its first emit"
            finally:
                del collector.emit  # the collector outlives the killed instance
                hosted.execute = original_execute
            error = InjectedFailure(f"heron-conformance killed {self.component} task "
                                    f"{self.task.task} at its tuple {self.seen}")
            raise ComponentFailure(self.component, self.task.task, error,
                                   f"{error} (injected failure)")

        hosted.execute = execute

    def describe(self) -> str:
        if self.fired:
            return (f"killed task {self.task.task} of {self.component} during its tuple "
                    f"{self.after}, {self.how}; restarted with what it held lost")
        return (f"{self.component} task {self.task.task} received only {self.seen} "
                f"tuple(s), fewer than the {self.after} at which it was to be killed")


class HeronAdapter(EngineAdapter):
    """The ``heron`` engine: Topology Master, Stream Managers and one process per task.

    Failure injection kills a real process: the run's topology is a generated wrapper
    (:mod:`conformance.kill_wrapper`) whose target bolt's first task sends itself
    ``SIGKILL`` at its ``after``-th tuple, once per run; its container's executor
    restarts it and under at-least-once the lost roots time out and replay. Only
    Python bolts can be killed so: a multi-lang target is skipped, saying so."""

    name = "heron"
    capabilities = frozenset({"acking", "multilang", "ticks", "direct", "failure-injection",
                              "stateful"})

    def skip_reason(self, case: Case, kill: Kill | None = None) -> str | None:
        reason = super().skip_reason(case, kill)
        if reason is not None or kill is None:
            return reason
        variant = self._variant(case)
        try:
            with isolated_imports(*_project_roots(variant.project)):
                loaded = self._load(variant)
            component = kill.component or _first_bolt(loaded.plan)
        except HarnessError:
            return None  # run() reports it as an error, with the cause
        return _not_killable(variant, loaded, component)

    def run(self, case: Case, *, run_id: str, capture_path: Path, work_dir: Path,
            kill: Kill | None = None, time_limit: float | None = None) -> EngineOutput:
        case = self._variant(case)
        limit = self._time_limit(case, time_limit)
        work_dir = Path(work_dir)
        with isolated_imports(*_project_roots(case.project)):
            loaded = self._load(case)
        injection: _HeronKill | None = None
        run_case = case
        if kill is not None:
            injection = _HeronKill.prepare(case, kill, loaded, work_dir)
            run_case = injection.case
            with isolated_imports(*_project_roots(run_case.project),
                                  *_project_roots(case.project)):
                loaded = self._load(run_case)
        serializer = str(loaded.project.config.get("serializer") or "json")
        submission = Submission(project=str(Path(run_case.project).resolve()),
                                name=loaded.plan.name, env=run_case.env,
                                options=case_options(run_case), workers=run_case.workers)
        # Each instance process writes its own capture file into capture_path as it
        # emits; nothing here reads or merges them (the differ reads the directory).
        capture_dir = Path(capture_path)
        capture_dir.mkdir(parents=True, exist_ok=True)
        jsonl = JsonlCapture(directory=str(capture_dir.resolve()), engine=self.name,
                             case=case.name, run_id=run_id)
        runner = HeronLocalRun(loaded, submission, working_dir=work_dir,
                               multilang=case.multilang, multilang_serializer=serializer,
                               capture_all_streams=True, jsonl_capture=jsonl)
        began = time.monotonic()
        began_wall = time.time()
        try:
            result = runner.run(time_limit=limit)
        except Exception as exc:
            raise HarnessError(f"case {case.name} on {self.name}: the topology did not "
                               f"run: {type(exc).__name__}: {exc}; logs in "
                               f"{work_dir / 'logs'}") from exc
        # the instances' summaries count what they captured (a killed process's last
        # summary may be short of what its file holds: this count is for the report only)
        records = sum(cap.count for cap in result.capture.streams.values())
        elapsed = time.monotonic() - began
        if result.reason == "interrupted":
            raise KeyboardInterrupt
        error = result.error
        reason = result.reason
        metadata: dict[str, Any] = {"topology": loaded.plan.name}
        if injection is not None:
            injection.observe(result.log_dir, runner.instances, began_wall)
            metadata["injected failure"] = injection.describe()
            if injection.log_lines:
                metadata["task failures"] = injection.log_lines[:20]
        if reason == "time limit":
            error = self._hang(case, limit, result.log_dir)
        elif reason == "finished" and injection is not None and not injection.fired:
            reason, error = "error", (
                f"case {case.name} on engine {self.name}: the failure was not injected: "
                f"{injection.describe()}")
        return EngineOutput(self.name, reason, capture_dir, records,
                            elapsed, log_dir=result.log_dir, error=error, metadata=metadata)


def _not_killable(case: Case, loaded: LoadedTopology, component: str) -> str | None:
    """Why bolt ``component`` cannot be killed at a tuple on heron (None: it can)."""
    comp = loaded.plan.components.get(component)
    if comp is None or comp.kind != "bolt":
        return None  # run() reports the missing bolt as an error, as StormAdapter does
    in_process = component in loaded.compiled.component_classes
    if not in_process or (case.multilang and comp.shell):
        return (f"needs failure injection into a multi-lang component: the heron engine "
                f"kills a task at a chosen tuple only in a Python bolt class, and "
                f"{component!r} runs as a multi-lang subprocess")
    return None


class _HeronKill:
    """One kill on the heron engine: the wrapper project that arms it, and afterwards
    what the killed process recorded (its marker) and what its executor logged."""

    def __init__(self, case: Case, component: str, after: int, marker: Path) -> None:
        self.case = case
        self.component = component
        self.after = after
        self.marker = marker
        self.record: dict[str, Any] | None = None
        self.began_wall = 0.0
        self.seen: int | None = None
        self.task: int | None = None
        self.log_lines: list[str] = []
        self.restart: str | None = None

    @classmethod
    def prepare(cls, case: Case, kill: Kill, loaded: LoadedTopology, work_dir: Path) -> _HeronKill:

        plan = loaded.plan
        component = kill.component or _first_bolt(plan)
        comp = plan.components.get(component)
        if comp is None or comp.kind != "bolt":
            raise HarnessError(f"cannot inject a failure into {component!r}: no such bolt in "
                               f"topology {plan.name}")
        why = _not_killable(case, loaded, component)
        if why is not None:
            raise HarnessError(f"case {case.name} on heron: {why}")
        root = Path(work_dir) / "kill"
        root.mkdir(parents=True, exist_ok=True)
        marker = root / "killed.json"
        marker.unlink(missing_ok=True)
        project = wrap_project_for_kill(loaded.project.root, loaded.topology_file, component,
                                        root / "project")
        after = max(1, int(kill.after))
        options = {**case.options, KILL_COMPONENT: component, KILL_AFTER: after,
                   KILL_MARKER: str(marker)}
        return cls(replace(case, project=project, options=options), component, after, marker)

    @property
    def fired(self) -> bool:
        return self.record is not None

    def observe(self, log_dir: Path | None, instances: dict[str, dict[str, str]],
                began_wall: float) -> None:
        """After the run: the marker, the executor's log lines about the killed
        process, and (when the kill never happened) how many tuples the task got."""
        self.began_wall = began_wall
        self.record = read_marker(self.marker)
        pattern = re.compile(rf"container_(\d+)_{re.escape(self.component)}_(\d+)")
        tasks: dict[int, dict[str, str]] = {}
        for instance, values in instances.items():
            match = pattern.fullmatch(instance)
            if match and values.get("component", self.component) == self.component:
                tasks[int(match.group(2))] = values
        if self.record is not None:
            self.task = int(self.record["task"])
        elif tasks:
            self.task = min(tasks)
        if self.task is not None and self.task in tasks:
            try:
                self.seen = int(tasks[self.task].get("__execute-count", ""))
            except ValueError:
                self.seen = None
        if self.record is None or log_dir is None:
            return
        process = re.compile(rf"\bcontainer_\d+_{re.escape(self.component)}_{self.task}\b")
        for path in sorted(Path(log_dir).glob("executor-*.log")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                if process.search(line) and ("exited with status" in line
                                             or "restarted" in line
                                             or "giving up" in line):
                    self.log_lines.append(line.strip())
                    found = re.search(r"restarted (\S+) \((restart \d+)\), pid (\d+)", line)
                    if found and self.restart is None:
                        self.restart = (f"its executor restarted {found.group(1)} "
                                        f"({found.group(2)}, pid {found.group(3)})")

    def describe(self) -> str:
        if self.record is not None:
            when = max(0.0, float(self.record.get("time", self.began_wall)) - self.began_wall)
            restart = self.restart or "no restart of the process was logged by its executor"
            return (f"killed task {self.task} of {self.component} during its tuple "
                    f"{self.record.get('tuple', self.after)}, before processing it: its "
                    f"process (pid {self.record.get('pid')}) sent itself SIGKILL "
                    f"{when:.1f}s into the run; {restart}, with what it held lost")
        task = f"task {self.task}" if self.task is not None else "its first task"
        seen = (f"received only {self.seen} tuple(s)" if self.seen is not None
                else "received too few tuples")
        return (f"{self.component} {task} {seen}, fewer than the {self.after} at which it "
                "was to be killed")


#: the engines ``--engines`` can name
ENGINES: dict[str, type[EngineAdapter]] = {"storm": StormAdapter, "heron": HeronAdapter}


def adapter_for(name: str, *, label: str | None = None,
                project: Path | None = None) -> EngineAdapter:
    try:
        return ENGINES[name](label=label, project=project)
    except KeyError:
        raise HarnessError(f"unknown engine {name!r}; engines: {', '.join(ENGINES)}") from None
