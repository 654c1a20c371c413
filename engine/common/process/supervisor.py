"""Start, watch, restart and stop a set of processes, as Heron's executor does.

One long-lived thread does every spawn, because ``PR_SET_PDEATHSIG`` fires when the
*thread* that forked a child exits: children spawned from a short-lived thread (a
request handler, a timer) would be killed when it returns. Public methods hand their
work to that thread and wait for it.

Policy (engine.common.process.restart_policy): a process that exits, whatever its status, is
restarted, forever, as Heron's executor and Storm's supervisor do: at once when it made
progress since it started (it left its progress marker, engine.common.process.progress, or ran
for the policy's reset time), else after a backoff that doubles up to a cap. Three exits
in a row with no progress make it *crash-looping*: reported through ``on_event``,
:meth:`Supervisor.crash_looping` and, with ``status_dir``, a status file per process
(``<name>.json``: the state and its latest restart records) that the container's Metrics
Manager and ``heron run`` read. ``stop`` terminates process groups stage by stage within one grace
period, SIGKILLs what is left, and reaps every child: no zombies, no grandchildren left.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from engine.common.process.progress import PROGRESS_FILE_ENV, progress_path
from engine.common.process.restart_policy import RestartPolicy, RestartRecord, RestartTracker
from engine.common.process.spawn import group_alive, read_pid_file, signal_group, spawn, stop_groups
from engine.common.process.spec import ProcessSpec

log = logging.getLogger("heron.process.supervisor")

#: exit status recorded when a process could not even be started (command not found...)
SPAWN_FAILED = 127
#: how long a predecessor's leftover process gets to stop (SIGTERM) before SIGKILL
LEFTOVER_GRACE_SECS = 5.0


@dataclass(frozen=True)
class SupervisorEvent:
    """What happened to a supervised process.

    kind: ``started`` (first start), ``exited`` (will be restarted), ``restarted``,
    ``crash_looping`` (its third exit in a row with no progress; it is still restarted),
    ``recovered`` (a crash-looping process made progress), ``stopped`` (by ``stop``).
    """

    kind: str
    name: str
    pid: int | None = None
    returncode: int | None = None
    restarts: int = 0
    message: str = ""
    #: how long the restart waits (``exited``)
    delay: float = 0.0


class _Child:
    def __init__(self, spec: ProcessSpec, tracker: RestartTracker) -> None:
        self.spec = spec
        self.proc: subprocess.Popen | None = None
        self.tracker = tracker
        self.restart_at: float | None = None
        self.last_returncode: int | None = None
        self.spawn_error: str | None = None

    @property
    def restarts(self) -> int:
        return self.tracker.attempts

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def live_pid(self) -> int | None:
        """The pid of the process while it runs (``alive``), else None."""
        proc = self.proc
        return proc.pid if proc is not None and proc.poll() is None else None


class Supervisor:
    def __init__(self, specs: Iterable[ProcessSpec], policy: RestartPolicy | None = None, *,
                 on_event: Callable[[SupervisorEvent], None] | None = None,
                 pid_dir: Path | str | None = None, poll_interval: float = 0.1,
                 name: str = "supervisor", status_dir: Path | str | None = None) -> None:
        self.policy = policy or RestartPolicy()
        self.on_event = on_event
        self.pid_dir = Path(pid_dir) if pid_dir is not None else None
        self.status_dir = Path(status_dir) if status_dir is not None else None
        self.poll_interval = poll_interval
        self.name = name
        #: every restart decision, oldest first (bounded)
        self.records: collections.deque[RestartRecord] = collections.deque(maxlen=1000)
        self._children: dict[str, _Child] = {}
        for spec in specs:
            if spec.name in self._children:
                raise ValueError(f"two processes named {spec.name!r}")
            self._children[spec.name] = self._new_child(spec)
        self._commands: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()
        self._lock = threading.Lock()

    # -- public API -------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return list(self._children.keys())

    def start(self) -> None:
        """Start every process (from the supervisor thread) and begin monitoring."""
        with self._lock:
            if self._thread is not None:
                raise RuntimeError(f"{self.name} already started")
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()
        self._call(self._start_all)

    def restart(self, name: str, grace: float = 5.0) -> None:
        """Stop ``name`` (SIGTERM, then SIGKILL after ``grace``) and start it again now.

        An explicit restart is not a failure: it is not recorded and does not wait for
        a pending backoff.
        """
        if name not in self._children:
            raise KeyError(f"no process named {name!r}; known: {', '.join(self._children)}")
        self._call(lambda: self._restart(self._children[name], grace))

    def stop(self, grace: float = 5.0, stages: Sequence[Iterable[str]] | None = None) -> None:
        """Stop every process and reap it; idempotent.

        ``stages`` lists groups of names stopped one after the other (SIGTERM to the
        stage's process groups, wait for them); processes not named stop last, together.
        All stages share one ``grace`` deadline, after which the remaining groups are
        SIGKILLed, so ``stop`` returns in about ``grace`` seconds at most.
        """
        if self._stopped.is_set():
            return
        thread = self._thread
        if thread is None or not thread.is_alive() or threading.current_thread() is thread:
            self._stop_all(grace, stages)
            return
        self._call(lambda: self._stop_all(grace, stages), timeout=grace + 30)
        thread.join(5)

    def add(self, spec: ProcessSpec) -> None:
        """Start a new process under supervision (a repacked container gained it)."""
        if spec.name in self._children:
            raise ValueError(f"a process named {spec.name!r} is already supervised")

        def do() -> None:
            child = self._new_child(spec)
            self._children[spec.name] = child
            self._stop_leftovers([child])
            proc = self._spawn(child)
            if proc is not None:
                self._emit(SupervisorEvent("started", spec.name, proc.pid))
            else:
                self._handle_exit(child, SPAWN_FAILED)

        self._call(do)

    def remove(self, name: str, grace: float = 5.0) -> None:
        """Stop ``name`` (SIGTERM, SIGKILL after ``grace``) and forget it."""
        if name not in self._children:
            raise KeyError(f"no process named {name!r}")

        def do() -> None:
            child = self._children.pop(name)
            child.restart_at = None
            self._terminate([child], time.monotonic() + grace)
            self._emit(SupervisorEvent("stopped", name, returncode=child.last_returncode,
                                       restarts=child.restarts))

        self._call(do)

    def spec(self, name: str) -> ProcessSpec:
        return self._children[name].spec

    def pid(self, name: str) -> int | None:
        return self._children[name].live_pid()

    def pids(self) -> dict[str, int]:
        """Live processes by name."""
        return {n: pid for n, c in list(self._children.items())
                if (pid := c.live_pid()) is not None}

    def restarts(self, name: str) -> int:
        return self._children[name].restarts

    def crash_looping(self) -> dict[str, str]:
        """Crash-looping processes by name, with the reason of their last exit."""
        return {n: c.tracker.last_error for n, c in list(self._children.items())
                if c.tracker.crash_looping}

    def tracker(self, name: str) -> RestartTracker:
        return self._children[name].tracker

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    # -- the supervisor thread --------------------------------------------------------
    def _call(self, fn: Callable[[], None], timeout: float | None = None) -> None:
        if threading.current_thread() is self._thread:
            fn()
            return
        if self._stopped.is_set():
            raise RuntimeError(f"{self.name} is stopped")
        future: Future = Future()
        self._commands.put((fn, future))
        future.result(timeout)

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                fn, future = self._commands.get(timeout=self.poll_interval)
            except queue.Empty:
                pass
            else:
                try:
                    fn()
                except BaseException as exc:  # handed to the caller
                    future.set_exception(exc)
                else:
                    future.set_result(None)
            if not self._stopped.is_set():
                try:
                    self._check()
                except Exception:  # never let monitoring die silently
                    log.exception("%s: monitoring failed", self.name)
        # Fail whatever was queued after the stop.
        while True:
            try:
                _, future = self._commands.get_nowait()
            except queue.Empty:
                break
            future.set_exception(RuntimeError(f"{self.name} is stopped"))

    def _emit(self, event: SupervisorEvent) -> None:
        if self.on_event is None:
            return
        try:
            self.on_event(event)
        except Exception:
            log.exception("%s: event callback failed on %s", self.name, event)

    def _new_child(self, spec: ProcessSpec) -> _Child:
        return _Child(spec, RestartTracker(spec.name, self.policy, on_record=self.records.append))

    def _progress_file(self, child: _Child) -> Path | None:
        return progress_path(self.pid_dir, child.spec.name) if self.pid_dir is not None else None

    def _spawn(self, child: _Child) -> subprocess.Popen | None:
        """Start ``child``'s process: the process, or None when it cannot be started."""
        progress = self._progress_file(child)
        extra = None
        if progress is not None:
            progress.unlink(missing_ok=True)
            extra = {PROGRESS_FILE_ENV: str(progress)}
        try:
            proc = spawn(child.spec, self.pid_dir, extra)
            child.proc = proc
            child.tracker.started()
            return proc
        except OSError as exc:
            child.proc = None
            child.last_returncode = SPAWN_FAILED
            child.spawn_error = f"could not be started: {exc}"
            log.error("%s: cannot start %s (%s): %s", self.name, child.spec.name,
                      " ".join(child.spec.argv), exc)
            return None

    def _stop_leftovers(self, children: Iterable[_Child]) -> None:
        """Stop the processes a predecessor left running under our names.

        A supervisor killed outright (``kill -9`` of an executor) cannot stop its
        children; they notice their parent is gone and stop, but not at once. Started
        beside them, a new copy would find its name taken: a Stream Manager keeps the
        first connection under an instance's identity, so the new instance would never
        be heard. The pid files say who they are (pid and start time, so a reused pid
        is never hit); their groups get SIGTERM, then SIGKILL after a grace period."""
        if self.pid_dir is None:
            return
        found = []
        for child in children:
            proc = read_pid_file(self.pid_dir / f"{child.spec.name}.pid")
            if proc is not None:  # called before the child is spawned: never ours
                found.append((child.spec.name, proc.pid))
        if not found:
            return
        log.warning("%s: stopping what a previous run left running: %s", self.name,
                    ", ".join(f"{name} (pid {pid})" for name, pid in found))
        stop_groups([pid for _, pid in found], LEFTOVER_GRACE_SECS)

    def _start_all(self) -> None:
        self._stop_leftovers(self._children.values())
        for child in self._children.values():
            proc = self._spawn(child)
            if proc is not None:
                self._emit(SupervisorEvent("started", child.spec.name, proc.pid))
            else:
                self._handle_exit(child, SPAWN_FAILED)

    def _check(self) -> None:
        now = time.monotonic()
        for child in self._children.values():
            if child.proc is not None:
                code = child.proc.poll()
                if code is not None:
                    pgid = child.proc.pid
                    child.proc = None
                    self._remove_pid_file(child)
                    self._kill_leftover_group(pgid)
                    self._handle_exit(child, code)
                else:
                    self._watch_progress(child)
            elif child.restart_at is not None and now >= child.restart_at:
                child.restart_at = None
                proc = self._spawn(child)
                if proc is not None:
                    log.warning("%s: restarted %s (restart %d), pid %d", self.name,
                                child.spec.name, child.restarts, proc.pid)
                    self._emit(SupervisorEvent("restarted", child.spec.name, proc.pid,
                                               restarts=child.restarts))
                else:
                    self._handle_exit(child, SPAWN_FAILED)

    def _progressed(self, child: _Child) -> bool:
        progress = self._progress_file(child)
        return progress is not None and progress.exists()

    def _watch_progress(self, child: _Child) -> None:
        """A running process that was failing: clear its status once it progresses (or
        has run for the reset time)."""
        tracker = child.tracker
        if not (tracker.failures_in_a_row or tracker.crash_looping):
            return
        was = tracker.crash_looping
        if self._progressed(child):
            tracker.progressed()
        else:
            tracker.tick()
        if was and not tracker.crash_looping:
            log.warning("%s: %s makes progress again; no longer crash-looping", self.name,
                        child.spec.name)
            self._emit(SupervisorEvent("recovered", child.spec.name, self.pid(child.spec.name),
                                       restarts=child.restarts))
        if not tracker.failures_in_a_row:
            self._write_status(child)

    def _handle_exit(self, child: _Child, code: int) -> None:
        child.last_returncode = code
        name = child.spec.name
        tracker = child.tracker
        was = tracker.crash_looping
        reason = child.spawn_error or f"exited with status {code}"
        child.spawn_error = None
        delay = tracker.failed(reason, progressed=self._progressed(child))
        child.restart_at = time.monotonic() + delay
        record = tracker.records[-1]
        log.warning("%s: %s %s (%s); restarting %s (restart %d)", self.name, name, reason,
                    "after progress" if record.progressed
                    else f"no progress, {record.failures_in_a_row} in a row",
                    f"in {delay:g}s" if delay else "now", child.restarts)
        self._emit(SupervisorEvent("exited", name, returncode=code, restarts=child.restarts,
                                   message=reason, delay=delay))
        if tracker.crash_looping and not was:
            log.error("%s: %s is crash-looping: %d exits in a row with no progress (last: %s); "
                      "it keeps being restarted, at most every %gs", self.name, name,
                      record.failures_in_a_row, reason, self.policy.max_ms / 1000)
            self._emit(SupervisorEvent("crash_looping", name, returncode=code,
                                       restarts=child.restarts, message=reason, delay=delay))
        self._write_status(child)

    def _write_status(self, child: _Child) -> None:
        """``<status_dir>/<name>.json``: the process's restart state and latest records,
        replaced atomically."""
        if self.status_dir is None:
            return
        tracker = child.tracker
        data = {**tracker.status(), "supervisor": self.name,
                "records": [r.to_json() for r in list(tracker.records)[-20:]]}
        try:
            self.status_dir.mkdir(parents=True, exist_ok=True)
            target = self.status_dir / f"{child.spec.name}.json"
            tmp = self.status_dir / f".{child.spec.name}.json.{os.getpid()}"
            tmp.write_text(json.dumps(data, indent=1))
            os.replace(tmp, target)
        except OSError as exc:
            log.warning("%s: cannot write the restart status of %s: %s", self.name,
                        child.spec.name, exc)

    def _restart(self, child: _Child, grace: float) -> None:
        child.restart_at = None
        self._terminate([child], time.monotonic() + grace)
        proc = self._spawn(child)
        if proc is not None:
            log.warning("%s: restarted %s on request, pid %d", self.name, child.spec.name,
                        proc.pid)
            self._emit(SupervisorEvent("restarted", child.spec.name, proc.pid,
                                       restarts=child.restarts, message="on request"))
        else:
            self._handle_exit(child, SPAWN_FAILED)

    def _stop_all(self, grace: float, stages: Sequence[Iterable[str]] | None) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        ordered: list[list[_Child]] = []
        seen: set[str] = set()
        for stage in stages or ():
            group = [self._children[n] for n in stage if n in self._children and n not in seen]
            seen.update(c.spec.name for c in group)
            if group:
                ordered.append(group)
        rest = [c for n, c in self._children.items() if n not in seen]
        if rest:
            ordered.append(rest)
        deadline = time.monotonic() + max(0.0, grace)
        for group in ordered:
            for child in group:
                child.restart_at = None
            self._terminate(group, deadline)
            for child in group:
                self._emit(SupervisorEvent("stopped", child.spec.name,
                                           returncode=child.last_returncode,
                                           restarts=child.restarts))

    def _terminate(self, group: list[_Child], deadline: float) -> None:
        """SIGTERM the groups, wait until ``deadline``, SIGKILL, reap."""
        live = [proc for c in group if (proc := c.proc) is not None and proc.poll() is None]
        for proc in live:
            signal_group(proc.pid, signal.SIGTERM)
        while live and time.monotonic() < deadline:
            live = [proc for proc in live if proc.poll() is None]
            if live:
                time.sleep(0.02)
        for child in group:
            proc = child.proc
            if proc is None:
                continue
            if proc.poll() is None:
                signal_group(proc.pid, signal.SIGKILL)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    log.error("%s: %s (pid %d) survives SIGKILL", self.name, child.spec.name,
                              proc.pid)
                    continue
            child.last_returncode = proc.returncode
            self._kill_leftover_group(proc.pid)
            child.proc = None
            self._remove_pid_file(child)

    @staticmethod
    def _kill_leftover_group(pgid: int) -> None:
        """Grandchildren left in a group whose leader has exited die with it (the group
        id is the leader's pid: every child starts its own session)."""
        if group_alive(pgid):
            signal_group(pgid, signal.SIGKILL)

    def _remove_pid_file(self, child: _Child) -> None:
        if self.pid_dir is not None:
            (self.pid_dir / f"{child.spec.name}.pid").unlink(missing_ok=True)
