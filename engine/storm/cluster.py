"""LocalCluster: Storm's execution model in one process, the reference (oracle) engine.

It plays the role Storm's LocalCluster plays for ``sparse run``, without a JVM: one
thread per executor, tasks numbered as Storm numbers them, bounded queues between
executors, Storm's acker as a system component, tick tuples, and a finite-run mode that
ends when every spout reports it is exhausted (``is_exhausted()``, Storm's
CompletableSpout) and nothing is left in flight. A task that raises is restarted, forever,
under the restart policy the topology's config sets (engine.common.process.restart_policy); a
run whose time limit ends while a task is crash-looping ends in error, naming it.

Under ``topology.reliability.mode: EFFECTIVELY_ONCE`` a :class:`~.checkpoint.Checkpointer`
thread takes checkpoints of every stateful task and rolls the whole topology back when a
task fails, instead of restarting that task alone; a finite run ends with a checkpoint
taken once everything is drained, so two-phase-commit sinks commit their last
transaction before the run reports finished. Checkpoints go to
``<heron.statefulstorage.localfs.root.path>/<topology>`` when the config names a root,
else to ``<state_dir or log_dir>/checkpoints/<topology>`` (so ``heron run`` in a project
finds them again in ``logs/`` on its next run, unless ``topology.stateful.start.clean``).
"""

from __future__ import annotations

import logging
import queue
import random
import shlex
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compat.storm_api.hosting import host_component
from compat.storm_api.state import StatefulComponent
from engine.common.multilang import host_shell_component
from engine.common.process.restart_policy import RestartPolicy
from engine.common.runtime.capture import OutputCapture
from engine.common.runtime.errors import LocalEngineError
from engine.common.runtime.layout import ACKER_COMPONENT, assign_tasks, build_context
from engine.common.runtime.logs import close_logger, task_logger
from engine.common.runtime.stats import ComponentStats, aggregate
from engine.common.serialization import serializer_for_config
from engine.config.checkpointing import checkpointing
from engine.config.errors import ConfigError
from engine.config.execution import receive_buffer_size, task_count
from engine.config.key_groups import key_groups as key_groups_of
from engine.config.keys import NAME_KEY, with_defaults
from engine.config.reliability import reliability, tick_frequency
from engine.statefulstorage import open_storage
from engine.storm.checkpoint import Checkpointer, CheckpointStats
from engine.storm.executors import AckerExecutor, BoltExecutor, HostedTask, SpoutExecutor
from engine.storm.routing import build_routes
from engine.storm.runtime import POLL, TICK, Runtime

log = logging.getLogger("heron.storm")


@dataclass
class RunResult:
    """How a run ended and what it did."""

    reason: str  # "finished" | "time limit" | "interrupted" | "error"
    elapsed: float
    components: dict[str, ComponentStats]
    capture: OutputCapture
    log_dir: Path
    error: str | None = None
    max_spout_pending_seen: dict[str, int] = field(default_factory=dict)
    #: what was crash-looping when the run ended ("component 'x' task 3") -> last error
    crash_looping: dict[str, str] = field(default_factory=dict)
    #: EFFECTIVELY_ONCE only: checkpoints completed and abandoned, restores and why
    checkpoints: CheckpointStats | None = None


class LocalCluster:
    """Runs one compiled topology in this process.

    ``compiled`` has ``.plan`` (the LogicalPlan) and ``.component_classes``. Use as a
    context manager or call :meth:`start` and :meth:`stop`; :meth:`run` blocks until the
    topology finishes, the time limit passes or Ctrl-C.
    """

    def __init__(self, compiled: Any, *, log_dir: Path | None = None,
                 capture: OutputCapture | None = None, seed: int | None = None,
                 on_task_failure: Callable[[str], None] | None = None,
                 multilang: bool = False, shell_cwd: Path | None = None,
                 multilang_serializer: str = "json", state_dir: Path | None = None) -> None:
        """``state_dir``: where EFFECTIVELY_ONCE checkpoints go when the topology's config
        names no storage root (``<state_dir>/checkpoints/<topology>``); default the log
        directory, so a run with the same log directory restores the last one."""
        self.plan = compiled.plan
        self.classes: Mapping[str, type] = compiled.component_classes
        self.conf = with_defaults(self.plan.config)
        self.conf[NAME_KEY] = self.plan.name
        # Storm's key for one submission's id (its "name-N-secs" form)
        self.conf["storm.id"] = f"{self.plan.name}-1-{int(time.time())}"
        self.reliability = reliability(self.conf)
        self.restart_policy = RestartPolicy.from_config(self.conf)
        self.log_dir = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="heron-storm-"))
        self.capture = capture or OutputCapture()
        #: run Python components that have a shell spec (streamparse's) as subprocesses
        self.multilang = multilang
        #: where shell components start (the project's src/, as Storm's resources dir)
        self.shell_cwd = shell_cwd
        self.multilang_serializer = multilang_serializer
        self._rng = random.Random(seed)
        self._on_task_failure = on_task_failure or (lambda line: log.error("%s", line))
        self._fatal: BaseException | None = None
        self._fatal_lock = threading.Lock()
        self.tasks: list[HostedTask] = []
        self.spouts: list[SpoutExecutor] = []
        self._threads: list[threading.Thread] = []
        self._tick_thread: threading.Thread | None = None
        self._started = False
        self._tick_plan: list[tuple[float, list[int]]] = []
        self.runtime: Runtime | None = None
        #: user metrics (report_metric): (component, task) -> {name: last value}
        self.metrics: dict[tuple[str, int], dict[str, Any]] = {}
        self.state_dir = Path(state_dir) if state_dir else None
        #: EFFECTIVELY_ONCE only
        self.checkpointer: Checkpointer | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        plan = self.plan
        num_tasks = {c.name: self._num_tasks(c) for c in plan.components.values()}
        layout = assign_tasks(plan, num_tasks, self.reliability.ackers)
        self.layout = layout
        routes = build_routes(plan, layout.tasks_by_component, self._rng,
                              key_groups_of(self.conf) if self.reliability.effectively_once
                              else None)
        for comp_routes in routes.values():
            for route in comp_routes.values():
                if route.leaf or self.capture.all_streams:
                    route.capture = self.capture.declare(route.component, route.stream,
                                                         route.fields)
        rt = Runtime(plan=plan, conf=self.conf, serializer=serializer_for_config(self.conf),
                     reliability=self.reliability, routes=routes, capture=self.capture,
                     rng=self._rng)
        self.runtime = rt
        rt.metrics = self.metrics
        capacity = receive_buffer_size(self.conf)
        states = self._open_checkpoints(rt, layout) if self.reliability.effectively_once else {}
        try:
            for comp in plan.components.values():
                self._start_component(rt, comp, layout, capacity, states)
            for task_id in layout.tasks_by_component.get(ACKER_COMPONENT, []):
                inbox: queue.Queue = queue.Queue()  # bounded by tuples in flight
                rt.task_queues[task_id] = inbox
                rt.acker_tasks.append(task_id)
                self._threads.append(AckerExecutor(rt, task_id, inbox, self._fatal_error))
        except BaseException:
            self._close_tasks()
            raise
        self._started = True
        for thread in self._threads:
            thread.start()
        for spout in self.spouts:
            spout.send(("activate",))
        self._start_ticks(rt)
        if self.checkpointer is not None:
            self.checkpointer.start()

    def _is_stateful(self, comp: Any) -> bool:
        """Runs in this process as a StatefulComponent (multi-lang ones cannot be)."""
        cls = self.classes.get(comp.name)
        return (isinstance(cls, type) and issubclass(cls, StatefulComponent)
                and self._shell_command(comp) is None)

    def _open_checkpoints(self, rt: Runtime, layout: Any) -> dict[int, Any]:
        """EFFECTIVELY_ONCE: open the storage, make the checkpointer and return the state
        each stateful task starts with (the newest consistent checkpoint's)."""
        settings = checkpointing(self.conf)
        storage = open_storage(settings, topology_name=self.plan.name,
                               working_dir=self.state_dir or self.log_dir)
        cp = Checkpointer(rt, settings, storage, topology=self.plan.name, quiet=self._quiet,
                          on_fatal=self._fatal_error, key_groups=key_groups_of(self.conf),
                          classes=dict(self.classes))
        cp.tasks = self.tasks
        cp.spouts = self.spouts
        stateful = {c.name: list(layout.tasks_by_component[c.name])
                    for c in self.plan.components.values() if self._is_stateful(c)}
        states = cp.initial_states(stateful, settings.start_clean)
        self.checkpointer = cp
        rt.checkpointer = cp
        return states

    def _num_tasks(self, comp: Any) -> int:
        try:
            return task_count(comp.config, comp.parallelism)
        except ConfigError as exc:
            raise LocalEngineError(f"component {comp.name!r}: {exc}") from None

    def _component_conf(self, comp: Any) -> dict[str, Any]:
        conf = dict(self.conf)
        conf.update(comp.config)
        return conf

    def _start_component(self, rt: Runtime, comp: Any, layout: Any, capacity: int,
                         states: Mapping[int, Any]) -> None:
        conf = self._component_conf(comp)
        task_ids = layout.tasks_by_component[comp.name]
        shell = self._shell_command(comp)
        executors = 0 if comp.kind == "spout" else min(comp.parallelism, len(task_ids))
        inboxes: dict[int, queue.Queue] = {}
        for i in range(executors):
            inbox: queue.Queue = queue.Queue(maxsize=capacity)
            for task_id in task_ids[i::executors]:
                inboxes[task_id] = inbox
                rt.task_queues[task_id] = inbox
        hosted_tasks = []
        stateful = rt.checkpointer is not None and self._is_stateful(comp)
        for task_id in task_ids:
            context = build_context(self.plan, layout, comp.name, task_id)
            rt.task_contexts[task_id] = context
            logger = task_logger(conf, self.log_dir, self.plan.name, comp.name, task_id)
            if shell is None:
                factory = self._python_factory(self.classes[comp.name], conf, context, logger)
            else:
                factory = self._shell_factory(comp.kind, shell, conf, context, logger,
                                              inboxes.get(task_id), task_id)
            task = HostedTask(rt, comp.name, task_id, comp.kind == "spout", factory, logger,
                              self._on_task_failure, self.restart_policy)
            task.shell = shell is not None
            task.stateful = stateful
            self.tasks.append(task)
            task.start(states.get(task_id))
            hosted_tasks.append(task)
        if comp.kind == "spout":
            for task in hosted_tasks:
                executor = SpoutExecutor(rt, task, self._fatal_error)
                rt.spout_inboxes[task.task] = executor.send
                self.spouts.append(executor)
                self._threads.append(executor)
            return
        for i in range(executors):
            mine = hosted_tasks[i::executors]
            self._threads.append(BoltExecutor(rt, mine, inboxes[mine[0].task], self._fatal_error))
            if rt.checkpointer is not None:
                rt.checkpointer.bolt_queues.append(inboxes[mine[0].task])
        freq = tick_frequency(conf)
        if freq:
            self._tick_plan.append((freq, [t.task for t in hosted_tasks]))

    def _shell_command(self, comp: Any) -> tuple[str, str] | None:
        """(command, script) when the component runs as a multi-lang subprocess, else None."""
        in_process = comp.name in self.classes
        if in_process and not (self.multilang and comp.shell):
            return None
        if not comp.shell:
            raise LocalEngineError(f"component {comp.name!r} has neither a Python class nor a "
                                   "shell command to run")
        command, script = comp.shell
        if command == "streamparse_run":
            # Our equivalent of streamparse_run, with this interpreter: it runs streamparse
            # and compat.storm_api classes alike, and needs nothing else on PATH.
            command = f"{shlex.quote(sys.executable)} -m compat.storm_api.run"
            if self.multilang_serializer != "json":
                script = f"-s {self.multilang_serializer} {script}"
        return command, script

    @staticmethod
    def _python_factory(cls: type, conf: dict, context: dict,
                        logger: logging.Logger) -> Callable[[Any, Any], Any]:
        def factory(collector: Any, state: Any = None) -> Any:
            return host_component(cls, dict(conf), context, collector, logger, state=state)

        return factory

    def _shell_factory(self, kind: str, shell: tuple[str, str], conf: dict, context: dict,
                       logger: logging.Logger, inbox: queue.Queue | None,
                       task_id: int) -> Callable[[Any, Any], Any]:
        def wake() -> None:
            if inbox is not None:
                try:
                    inbox.put_nowait((POLL, task_id))
                except queue.Full:
                    pass  # the executor is busy anyway and polls between items

        def factory(collector: Any, state: Any = None) -> Any:  # never stateful
            return host_shell_component(
                kind, shell[0], shell[1], dict(conf), context, collector, logger,
                cwd=self.shell_cwd or Path.cwd(), serializer=self.multilang_serializer,
                wake=wake)

        return factory

    def _start_ticks(self, rt: Runtime) -> None:
        plan = list(self._tick_plan)
        if not plan:
            return

        def loop() -> None:
            due = [time.monotonic() + freq for freq, _ in plan]
            while not rt.stopping.wait(0.01):
                now = time.monotonic()
                for i, (freq, tasks) in enumerate(plan):
                    if now >= due[i]:
                        with rt.tick_lock:  # the checkpointer stops ticks under it
                            if rt.ticks_paused:
                                continue
                            due[i] = now + freq
                            for task in tasks:
                                rt.put(task, (TICK, task, freq))

        self._tick_thread = threading.Thread(target=loop, name="ticks", daemon=True)
        self._tick_thread.start()

    def _fatal_error(self, exc: BaseException) -> None:
        with self._fatal_lock:
            if self._fatal is None:
                self._fatal = exc

    # -- control -----------------------------------------------------------------------
    def activate(self) -> None:
        for spout in self.spouts:
            spout.send(("activate",))

    def deactivate(self) -> None:
        for spout in self.spouts:
            spout.send(("deactivate",))

    def finished(self) -> bool:
        """Every spout exhausted with nothing tracked pending, and every queue drained."""
        # shell bolts answer asynchronously: an input they have not acked may still emit
        return bool(self.spouts) and all(s.done for s in self.spouts) and self._quiet()

    def _quiet(self) -> bool:
        rt = self.runtime
        return (rt is not None and rt.idle()
                and not any(t.shell and t.collector.inputs for t in self.tasks))

    def snapshot(self) -> dict[str, ComponentStats]:
        kinds = {c.name: c.kind for c in self.plan.components.values()}
        for task in self.tasks:
            task.stats.crash_looping = task.crash_looping
        return aggregate(kinds, (t.stats for t in self.tasks))

    def crash_looping(self) -> dict[str, str]:
        """Tasks failing again and again with no progress, with their last error."""
        return {f"component {t.component!r} task {t.task}": t.restart_tracker.last_error
                for t in self.tasks if t.crash_looping}

    def run(self, time_limit: float | None = None,
            on_progress: Callable[[dict[str, ComponentStats], float], None] | None = None,
            progress_interval: float = 0.25,
            until: Callable[[dict[str, ComponentStats]], bool] | None = None) -> RunResult:
        """Run until finished, ``time_limit`` seconds (None or 0: no limit), Ctrl-C, or
        ``until(stats)`` is true with nothing in flight (for spouts that cannot report
        exhaustion, such as multi-lang subprocesses)."""
        if not self._started:
            self.start()
        began = time.monotonic()
        reason, error = "finished", None
        looping: dict[str, str] = {}
        next_progress = began
        stable = 0
        try:
            while True:
                if self._fatal is not None:
                    reason, error = "error", str(self._fatal)
                    break
                now = time.monotonic()
                if self.finished() or (until is not None and self._quiet()
                                       and until(self.snapshot())):
                    stable += 1
                    if stable >= 2:
                        cp = self.checkpointer
                        if cp is None or cp.settled():
                            break
                        # EFFECTIVELY_ONCE: end on a checkpoint of the drained topology
                        cp.request_checkpoint()
                        stable = 0
                else:
                    stable = 0
                if time_limit and now - began >= time_limit:
                    reason = "time limit"
                    looping = self.crash_looping()
                    if looping:
                        named = "; ".join(f"{what} (last error: {error})"
                                          for what, error in looping.items())
                        reason, error = "error", ("still crash-looping when the time limit "
                                                  f"ended: {named}; see the logs in {self.log_dir}")
                    break
                if on_progress is not None and now >= next_progress:
                    on_progress(self.snapshot(), now - began)
                    next_progress = now + progress_interval
                time.sleep(0.02)
        except KeyboardInterrupt:
            reason = "interrupted"
        finally:
            elapsed = time.monotonic() - began
            self.stop()
        if on_progress is not None:
            on_progress(self.snapshot(), elapsed)
        return RunResult(reason=reason, elapsed=elapsed, components=self.snapshot(),
                         capture=self.capture, log_dir=self.log_dir, error=error,
                         max_spout_pending_seen={
                             f"{s.task.component}:{s.task.task}": s.max_pending_seen
                             for s in self.spouts}, crash_looping=looping,
                         checkpoints=self.checkpointer.stats if self.checkpointer else None)

    def stop(self, join_timeout: float = 5.0) -> None:
        """Stop every thread (bounded wait: a component stuck in user code is abandoned)."""
        rt = self.runtime
        if rt is None:
            return
        rt.stopping.set()
        deadline = time.monotonic() + join_timeout
        others = [t for t in (self._tick_thread, self.checkpointer) if t is not None and t.ident]
        for thread in others + self._threads:
            if thread.is_alive():
                thread.join(max(0.0, deadline - time.monotonic()))
        stuck = [t.name for t in self._threads if t.is_alive()]
        if stuck:
            log.warning("executors still busy in user code after %.0fs: %s", join_timeout,
                        ", ".join(stuck))
        self._close_tasks()
        self.capture.close()
        self.runtime = None

    def _close_tasks(self) -> None:
        for task in self.tasks:
            if task.hosted is not None:
                try:
                    task.hosted.close()
                except Exception:
                    pass
                task.hosted = None
            close_logger(task.logger)
