"""``heron run --engine heron``: submit to a private, embedded local state manager, run
the real processes under an in-process local scheduler, show progress from the Topology
Master's metrics, stop, and read the results back.

A finite run ends when every task has reported ``__done`` (each spout exhausted and
every bolt has received ``TaskDone`` from all its upstream tasks), the end-to-end form
of the ``storm`` engine's "every spout exhausted and nothing in flight". Components that
raise are restarted forever (engine.common.process.restart_policy); a run whose time limit ends
while one is crash-looping ends in error, naming it.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.common.launch import TMANAGER, LaunchSpec, StateManagerSpec, Submission
from engine.common.network.sockets import RequestTimeout, request
from engine.common.process.restart_policy import crash_loop_error
from engine.common.runtime.capture import OutputCapture
from engine.common.runtime.checkpoint_stats import CheckpointStats, RestoreRecord
from engine.common.runtime.stats import ComponentStats
from engine.common.security.guard import SocketSecurity
from engine.common.serialization import serializer_for_config
from engine.instance.capture import JsonlCapture, read_captures, write_jsonl_config
from engine.messages import tmanager_pb2
from engine.scheduler.local import LocalScheduler
from engine.submitter.deploy import deploy
from engine.tmanager.drain import wait_drained

log = logging.getLogger("heron.run")

_COUNTERS = {"__emit-count": "emitted", "__transfer-count": "transferred",
             "__execute-count": "executed", "__ack-count": "acked", "__fail-count": "failed",
             "__error-count": "errors", "__restart-count": "restarts"}


@dataclass
class HeronRunResult:
    reason: str
    elapsed: float
    components: dict[str, ComponentStats]
    capture: OutputCapture
    log_dir: Path
    error: str | None = None
    working_dir: Path | None = None
    tasks_done: dict[str, bool] = field(default_factory=dict)
    #: what was crash-looping when the run ended ("component 'x' task 3") -> last error
    crash_looping: dict[str, str] = field(default_factory=dict)
    #: EFFECTIVELY_ONCE only: checkpoints and restores, from the Topology Master's figures
    checkpoints: CheckpointStats | None = None


def checkpoint_stats(instances: dict[str, dict[str, str]]) -> CheckpointStats | None:
    """A heron run's checkpoints, from the Topology Master's and the instances' figures
    (None when the topology takes none)."""
    tm = next((v for k, v in instances.items() if "__checkpoints-completed" in v), None)
    if tm is None:
        return None
    stats = CheckpointStats(completed=int(tm.get("__checkpoints-completed", 0)),
                            abandoned=int(tm.get("__checkpoints-abandoned", 0)),
                            last_checkpoint_id=tm.get("__checkpoint-last-id", ""),
                            last_duration_secs=int(
                                tm.get("__checkpoint-last-duration-ms", 0)) / 1000,
                            last_bytes=int(tm.get("__checkpoint-last-bytes", 0)))
    for instance, values in sorted(instances.items()):
        if "__checkpoint-bytes" in values:
            stats.last_bytes_per_task[instance] = int(values["__checkpoint-bytes"])
    try:
        log = json.loads(tm.get("__restore-log", "[]"))
    except ValueError:
        log = []
    stats.restores = [RestoreRecord(checkpoint, reason) for reason, checkpoint in log]
    return stats


class HeronLocalRun:
    def __init__(self, loaded: Any, submission: Submission, *, working_dir: Path | None = None,
                 state_spec: StateManagerSpec | None = None, multilang: bool = False,
                 multilang_serializer: str = "json", capture_jsonl: Path | None = None,
                 keep_all: bool = False, capture_all_streams: bool = False,
                 capture_sink: Any = None, jsonl_capture: JsonlCapture | None = None) -> None:
        self.loaded = loaded
        self.plan = loaded.plan
        self.working_dir = Path(working_dir or tempfile.mkdtemp(prefix=f"heron-{self.plan.name}-"))
        self.state_spec = state_spec or StateManagerSpec(kind="local",
                                                         root=str(self.working_dir / "state"))
        self.submission = submission
        self.multilang = multilang
        self.multilang_serializer = multilang_serializer
        self.capture_jsonl = capture_jsonl
        self.keep_all = keep_all
        #: capture every stream, not only leaf streams (conformance)
        self.capture_all_streams = capture_all_streams
        #: receives every captured tuple with its task (a ``CaptureSink``)
        self.capture_sink = capture_sink
        #: every instance writes its captured tuples to a JSON-lines file of its own in
        #: this directory, as they are emitted (conformance: the differ reads them there)
        self.jsonl_capture = jsonl_capture
        self.spec: LaunchSpec | None = None
        self.scheduler: Any = None
        self._state: Any = None
        self._security: Any = None
        self.instances: dict[str, dict[str, str]] = {}
        self.exceptions: list[Any] = []
        #: the Topology Master answered at least once (it came up)
        self.tmanager_answered = False
        self._began = time.monotonic()

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        self._state = self.state_spec.open()
        self.spec = deploy(self.loaded, state=self._state, state_spec=self.state_spec,
                           working_dir=self.working_dir, submission=self.submission,
                           multilang=self.multilang,
                           multilang_serializer=self.multilang_serializer,
                           capture_all=bool(self.capture_jsonl or self.keep_all
                                            or self.capture_sink is not None),
                           capture_all_streams=self.capture_all_streams)
        if self.jsonl_capture is not None:  # before any instance starts and looks for it
            write_jsonl_config(self.spec.capture_dir, self.jsonl_capture)
        self._security = SocketSecurity.for_launch(self.spec)
        self.scheduler = LocalScheduler(self.spec, state=self._state)
        try:
            self.scheduler.launch()
        except BaseException:
            self.scheduler.kill()
            raise

    def _launched(self) -> LaunchSpec:
        """The launch's spec: every caller runs after ``start`` deployed it."""
        assert self.spec is not None, "the topology has not been started"
        return self.spec

    def stop(self, drain: float = 1.0) -> None:
        if self.scheduler is None:
            return
        try:
            self._control(tmanager_pb2.TopologyDeactivateRequest(
                topology_name=self._launched().topology_name,
                topology_id=self._launched().topology_id))
            location = self._location()
            if drain > 0 and location is not None:
                wait_drained(location.controller_endpoint, drain, security=self._security)
            self.poll_metrics()  # the counts the summary shows, after the drain
        except Exception:
            pass
        try:
            self.scheduler.kill()
        finally:
            self.scheduler = None
            if self._state is not None:
                self._state.close()
                self._state = None

    # -- the Topology Master -----------------------------------------------------------
    def _location(self) -> Any:
        return self._state.get("tmanagers", self._launched().topology_name)

    def _control(self, message: Any, timeout: float = 5.0) -> Any:
        location = self._location()
        if location is None:
            return None
        return request(location.controller_endpoint, message, timeout,
                       security=self._security)

    def poll_metrics(self) -> None:
        try:
            response = self._control(tmanager_pb2.MetricRequest(), timeout=2.0)
        except RequestTimeout:
            return
        if response is None:
            return
        self.tmanager_answered = True
        for task_metric in response.metric:
            values = self.instances.setdefault(task_metric.instance_id, {})
            for metric in task_metric.metric:
                component, _, name = metric.name.partition("/")
                values["component"] = component
                values[name] = metric.value

    def snapshot(self) -> dict[str, ComponentStats]:
        out = {c.name: ComponentStats(c.name, c.kind) for c in self.plan.components.values()}
        for values in self.instances.values():
            cs = out.get(values.get("component", ""))
            if cs is None:
                continue
            cs.tasks += 1
            for metric, attr in _COUNTERS.items():
                try:
                    setattr(cs, attr, getattr(cs, attr) + int(values.get(metric, 0)))
                except ValueError:
                    pass
            if values.get("__last-error"):
                cs.last_error = values["__last-error"]
            error = crash_loop_error(values)
            if error is not None:
                cs.crash_looping += 1
                cs.last_error = error
        return out

    def crash_looping(self) -> dict[str, str]:
        """Tasks (from their metrics) and executors (from the scheduler) failing again
        and again with no progress, with their last error."""
        out: dict[str, str] = {}
        for instance, values in sorted(self.instances.items()):
            error = crash_loop_error(values)
            if error is not None:
                task = instance.rsplit("_", 1)[-1]
                out[f"component {values.get('component', '?')!r} task {task}"] = error
        if self.scheduler is not None:
            out.update(self.scheduler.crash_looping())
        if not self.tmanager_answered and self.spec is not None:
            status = tmanager_status(self.spec.restarts_dir)
            if status.get("crash_looping"):
                out[f"the Topology Master ({TMANAGER})"] = (status.get("last_error")
                                                            or "crash-looping")
        return out

    def tmanager_never_came_up(self) -> str | None:
        """Why the run must fail when the Topology Master never answered: the metrics and
        the end of the run go through it, so all-zero counts would otherwise look like a
        quiet topology and exit 0."""
        if self.tmanager_answered or self.spec is None:
            return None
        status = tmanager_status(self.spec.restarts_dir)
        if not status.get("failures_in_a_row") and time.monotonic() - self._began < 15:
            return None  # not failed, only slow to start in a short run
        last = status.get("last_error") or last_log_error(self.spec.log_dir / f"{TMANAGER}.log")
        tried = f", started {status['attempts']} times" if status.get("attempts") else ""
        return (f"the Topology Master never came up{tried}"
                f"{f' (last error: {last})' if last else ''}; see its log "
                f"{self.spec.log_dir / f'{TMANAGER}.log'}")

    def _task_ids(self) -> list[str]:
        return [i for i, v in self.instances.items() if "__done" in v]

    def all_done(self) -> bool:
        expected = sum(c.parallelism for c in self.plan.components.values())
        ids = self._task_ids()
        return len(ids) >= expected and all(self.instances[i].get("__done") == "1" for i in ids)

    def failure(self) -> str | None:
        failures = self._launched().home / "failures"
        if failures.is_dir():
            for path in sorted(failures.iterdir()):
                if not path.name.startswith("."):
                    return path.read_text().strip()
        return None

    # -- the run -------------------------------------------------------------------------
    def run(self, time_limit: float | None = None,
            on_progress: Callable[[dict[str, ComponentStats], float], None] | None = None,
            progress_interval: float = 0.25) -> HeronRunResult:
        began = self._began = time.monotonic()
        reason, error = "finished", None
        looping: dict[str, str] = {}
        try:
            if self.scheduler is None:
                self.start()
            while True:
                time.sleep(progress_interval)
                self.poll_metrics()
                now = time.monotonic()
                error = self.failure()
                if error:
                    reason = "error"
                    break
                if self.all_done():
                    break
                if time_limit and now - began >= time_limit:
                    reason = "time limit"
                    looping = self.crash_looping()
                    if looping:
                        reason = "error"
                        error = crash_loop_message(looping, self._launched().log_dir)
                    elif self.tmanager_never_came_up():
                        reason, error = "error", self.tmanager_never_came_up()
                    break
                if on_progress is not None:
                    on_progress(self.snapshot(), now - began)
        except KeyboardInterrupt:
            reason = "interrupted"
        finally:
            elapsed = time.monotonic() - began
            self.stop(drain=0.0 if reason == "finished" else 5.0)
        components = self.snapshot()
        if on_progress is not None:
            on_progress(components, elapsed)
        serializer = serializer_for_config(dict(self.plan.config))
        capture = read_captures(self._launched().capture_dir, serializer.loads,
                                keep_all=self.keep_all, jsonl=self.capture_jsonl,
                                sink=self.capture_sink)
        return HeronRunResult(reason=reason, elapsed=elapsed, components=components,
                              capture=capture, log_dir=self._launched().log_dir, error=error,
                              working_dir=self.working_dir, crash_looping=looping,
                              tasks_done={i: v["__done"] == "1" for i, v in self.instances.items()
                                          if "__done" in v},
                              checkpoints=checkpoint_stats(self.instances))


def crash_loop_message(looping: dict[str, str], log_dir: Path) -> str:
    """One line naming what is crash-looping and its last error."""
    named = "; ".join(f"{what} (last error: {error})" for what, error in looping.items())
    return f"still crash-looping when the time limit ended: {named}; see the logs in {log_dir}"


def tmanager_status(restarts_dir: Path) -> dict[str, Any]:
    """The restart status the executor keeps for the Topology Master's process ({} when
    it has none or it cannot be read)."""
    try:
        return json.loads((restarts_dir / f"{TMANAGER}.json").read_text())
    except (OSError, ValueError):
        return {}


def last_log_error(path: Path) -> str:
    """The last line of a log that names an error (a traceback's last line), or ""."""
    try:
        lines = path.read_text(errors="replace").splitlines()[-200:]
    except OSError:
        return ""
    for line in reversed(lines):
        text = line.strip()
        if text and ("Error" in text or "error" in text.split(":", 1)[0]):
            return text[:300]
    return ""
