"""Running fixture projects on the heron engine and looking at what happened.

``HeronRun`` wraps :class:`engine.common.local_run.HeronLocalRun`: it starts the topology,
waits for the Topology Master's physical plan, remembers every process the run started
(from the pid files the scheduler and executors write while their children live), lets
a test act on the running topology, then runs it to the end (``finish``) or stops it,
and checks that every one of those processes is gone.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from engine.common.launch import StateManagerSpec, Submission
from engine.common.local_run import HeronLocalRun, HeronRunResult
from engine.common.process.spawn import read_pid_file
from engine.common.submission import load_topology

HERE = Path(__file__).resolve().parent
PROJECTS = HERE / "projects"
REPO = HERE.parents[2]


def complete_text(path: Path) -> str:
    """The complete lines of a file another process may be appending to.

    A line written by one ``write()`` can be seen half-written: the kernel copies a write
    into the page cache a page at a time, and the file grows as each page is copied, so a
    reader polling during a run can see the start of the last line without its end."""
    text = path.read_text()
    return text[: text.rfind("\n") + 1]


def json_lines(path: Path) -> list[dict]:
    """The complete JSON lines of a file being appended to (a malformed complete line
    still fails loudly)."""
    return [json.loads(line) for line in complete_text(path).splitlines() if line.strip()]


def kill_one(pids: Path, prefix: str) -> int | None:
    """SIGKILL the first live process whose pid file (in ``pids``) matches ``prefix*``
    (a glob: ``container_?_split``); its pid, or None when none is alive."""
    for path in sorted(pids.glob(f"{prefix}*.pid")):
        proc = read_pid_file(path)
        if proc is not None:
            os.kill(proc.pid, signal.SIGKILL)
            return proc.pid
    return None


def wait_until(predicate: Callable[[], Any], timeout: float = 60.0, interval: float = 0.2) -> Any:
    """The first truthy value of ``predicate()`` within ``timeout`` seconds, else its last."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


@dataclass
class Placement:
    """Where the physical plan put each task."""

    stmgrs: list[str]
    #: task id -> stream manager id (one per container)
    container_of: dict[int, str]
    #: component -> its task ids, sorted
    tasks: dict[str, list[int]]

    @classmethod
    def of(cls, pplan: Any) -> Placement:
        container_of: dict[int, str] = {}
        tasks: dict[str, list[int]] = {}
        for inst in pplan.instances:
            container_of[inst.info.task_id] = inst.stmgr_id
            tasks.setdefault(inst.info.component_name, []).append(inst.info.task_id)
        return cls(sorted(s.id for s in pplan.stmgrs), container_of,
                   {c: sorted(t) for c, t in tasks.items()})


@dataclass
class HeronRun:
    project: Path
    name: str
    working_dir: Path
    options: dict[str, Any] = field(default_factory=dict)
    workers: int | None = None
    multilang: bool = False
    keep_all: bool = True
    #: where the run keeps its state (default: a local state manager in the working dir)
    state_spec: StateManagerSpec | None = None

    def __post_init__(self) -> None:
        self.loaded = load_topology(self.project, name=self.name, cli_options=self.options,
                                    workers=self.workers)
        submission = Submission(project=str(self.project), name=self.name,
                                options=dict(self.options), workers=self.workers)
        self.runner = HeronLocalRun(self.loaded, submission, working_dir=self.working_dir,
                                    multilang=self.multilang, keep_all=self.keep_all,
                                    state_spec=self.state_spec)
        self.pplan: Any = None
        self.placement: Placement | None = None
        #: every process seen in the run's pid files: name -> psutil.Process
        self.processes: dict[str, psutil.Process] = {}
        self.result: HeronRunResult | None = None
        self._state: Any = None

    # -- starting ----------------------------------------------------------------------
    def start(self, timeout: float = 60.0) -> HeronRun:
        """Launch, and wait until the Topology Master has stored the physical plan."""
        self.runner.start()
        self._state = self.runner.state_spec.open()
        self.pplan = wait_until(lambda: self.state.get("pplans", self.name), timeout)
        assert self.pplan is not None, f"no physical plan within {timeout}s; logs in {self.log_dir}"
        self.placement = Placement.of(self.pplan)
        self.record_processes()
        return self

    @property
    def state(self) -> Any:
        if self._state is None:
            self._state = self.runner.state_spec.open()
        return self._state

    @property
    def log_dir(self) -> Path:
        return self.working_dir / "logs"

    @property
    def location(self) -> Any:
        """The Topology Master's location record (``tmanagers/<name>``)."""
        return self.state.get("tmanagers", self.name)

    def record_processes(self) -> dict[str, psutil.Process]:
        """Add the processes the run's pid files name now (each file is removed when its
        process exits, so this is sampled while the topology runs)."""
        for path in sorted((self.working_dir / "pids").glob("*.pid")):
            proc = read_pid_file(path)
            if proc is not None:
                self.processes.setdefault(path.stem, proc)
        return self.processes

    def metrics(self) -> dict[str, dict[str, str]]:
        """Per instance (and per stream manager) metrics from the Topology Master."""
        self.runner.poll_metrics()
        return self.runner.instances

    def emitted(self, component: str) -> int:
        self.runner.poll_metrics()
        return self.runner.snapshot()[component].emitted

    # -- ending ------------------------------------------------------------------------
    def finish(self, time_limit: float = 60.0) -> HeronRunResult:
        """Run until the topology ends by itself (or ``time_limit``), then kill it."""
        try:
            self.result = self.runner.run(time_limit=time_limit,
                                          on_progress=lambda *_: self.record_processes())
        finally:
            self.close()
        return self.result

    def close(self) -> None:
        """Kill whatever still runs (idempotent); release the state manager."""
        try:
            self.runner.stop()
        finally:
            if self._state is not None:
                self._state.close()
                self._state = None

    def alive(self, timeout: float = 10.0) -> list[str]:
        """Names of recorded processes still alive after ``timeout`` seconds."""
        def living() -> list[str]:
            out = []
            for name, proc in self.processes.items():
                try:
                    if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                        out.append(name)
                except psutil.NoSuchProcess:
                    pass
            return out
        wait_until(lambda: not living(), timeout)
        return living()

    def processes_naming_the_run(self) -> list[int]:
        """Live processes whose command line names this run's working directory."""
        needle = str(self.working_dir.resolve())
        found = []
        for proc in psutil.process_iter(["cmdline"]):
            try:
                if needle in " ".join(proc.info["cmdline"] or ()) and \
                        proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc.pid)
            except psutil.Error:
                continue
        return found


def leaf_tuples(result: HeronRunResult, component: str, stream: str = "default") -> list[list]:
    cap = result.capture.streams.get((component, stream))
    assert cap is not None, f"no capture of {component}/{stream}: {sorted(result.capture.streams)}"
    assert cap.tuples is not None, "run with keep_all=True to keep every tuple"
    return cap.tuples


def log_warnings(result: HeronRunResult, limit: int = 25) -> str:
    """The WARNING and ERROR lines of a run's process logs, for a failure message: a
    CI log keeps little else of a run whose directory is gone by the time anyone looks."""
    lines: list[str] = []
    for path in sorted(Path(result.log_dir).glob("*.log")):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            if " WARNING " in line or " ERROR " in line:
                lines.append(f"{path.name}: {line[:240]}")
    shown = lines[:limit]
    if len(lines) > limit:
        shown.append(f"... and {len(lines) - limit} more")
    return "\n".join(shown) or "(no warnings in the logs)"


def describe_run(result: HeronRunResult) -> str:
    """How the run ended, in a few lines: reason, error, tasks not done, log warnings."""
    not_done = sorted(t for t, done in result.tasks_done.items() if not done)
    return (f"run ended: {result.reason} after {result.elapsed:.1f}s; error: {result.error}; "
            f"tasks not done: {not_done or 'none'}; logs in {result.log_dir}\n"
            f"{log_warnings(result)}")
