"""Start, watch, restart and stop a set of processes, as Heron's executor does.

One long-lived thread does every spawn, because ``PR_SET_PDEATHSIG`` fires when the
*thread* that forked a child exits: children spawned from a short-lived thread (a
request handler, a timer) would be killed when it returns. Public methods hand their
work to that thread and wait for it.

Policy: a process that exits (whatever its status) is restarted after
``restart_interval`` seconds, at most ``max_restarts`` times; then it is given up
(reported through ``on_event`` and :attr:`Supervisor.failed`; Heron's executor then exits
with status 1). ``stop`` terminates process groups stage by stage within one grace
period, SIGKILLs what is left, and reaps every child: no zombies, no grandchildren left.
"""

from __future__ import annotations

import logging
import queue
import signal
import subprocess
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from engine.process.spawn import group_alive, signal_group, spawn
from engine.process.spec import ProcessSpec

log = logging.getLogger("heron.process.supervisor")

#: exit status recorded when a process could not even be started (command not found...)
SPAWN_FAILED = 127


@dataclass(frozen=True)
class SupervisorEvent:
    """What happened to a supervised process.

    kind: ``started`` (first start), ``exited`` (will be restarted), ``restarted``,
    ``gave_up`` (exited once more than the policy allows), ``stopped`` (by ``stop``).
    """

    kind: str
    name: str
    pid: int | None = None
    returncode: int | None = None
    restarts: int = 0
    message: str = ""


class _Child:
    def __init__(self, spec: ProcessSpec) -> None:
        self.spec = spec
        self.proc: subprocess.Popen | None = None
        self.restarts = 0
        self.restart_at: float | None = None
        self.gave_up = False
        self.last_returncode: int | None = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Supervisor:
    def __init__(self, specs: Iterable[ProcessSpec], max_restarts: int = 5,
                 restart_interval: float = 1.0, *,
                 on_event: Callable[[SupervisorEvent], None] | None = None,
                 pid_dir: Path | str | None = None, poll_interval: float = 0.1,
                 name: str = "supervisor") -> None:
        self._children: dict[str, _Child] = {}
        for spec in specs:
            if spec.name in self._children:
                raise ValueError(f"two processes named {spec.name!r}")
            self._children[spec.name] = _Child(spec)
        self.max_restarts = max(0, int(max_restarts))
        self.restart_interval = max(0.0, float(restart_interval))
        self.on_event = on_event
        self.pid_dir = Path(pid_dir) if pid_dir is not None else None
        self.poll_interval = poll_interval
        self.name = name
        #: set when a process was given up (exited more often than the policy allows)
        self.failed = threading.Event()
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

        An explicit restart does not count against the restart policy and revives a
        process that was given up.
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
            child = _Child(spec)
            self._children[spec.name] = child
            if self._spawn(child):
                self._emit(SupervisorEvent("started", spec.name, child.proc.pid))
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
        child = self._children[name]
        return child.proc.pid if child.alive() else None

    def pids(self) -> dict[str, int]:
        """Live processes by name."""
        return {n: c.proc.pid for n, c in list(self._children.items()) if c.alive()}

    def restarts(self, name: str) -> int:
        return self._children[name].restarts

    def gave_up(self) -> list[str]:
        return [n for n, c in list(self._children.items()) if c.gave_up]

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

    def _spawn(self, child: _Child) -> bool:
        try:
            child.proc = spawn(child.spec, self.pid_dir)
            return True
        except OSError as exc:
            child.proc = None
            child.last_returncode = SPAWN_FAILED
            log.error("%s: cannot start %s (%s): %s", self.name, child.spec.name,
                      " ".join(child.spec.argv), exc)
            return False

    def _start_all(self) -> None:
        for child in self._children.values():
            if self._spawn(child):
                self._emit(SupervisorEvent("started", child.spec.name, child.proc.pid))
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
            elif child.restart_at is not None and now >= child.restart_at:
                child.restart_at = None
                child.restarts += 1
                if self._spawn(child):
                    log.warning("%s: restarted %s (restart %d of %d), pid %d", self.name,
                                child.spec.name, child.restarts, self.max_restarts,
                                child.proc.pid)
                    self._emit(SupervisorEvent("restarted", child.spec.name, child.proc.pid,
                                               restarts=child.restarts))
                else:
                    self._handle_exit(child, SPAWN_FAILED)

    def _handle_exit(self, child: _Child, code: int) -> None:
        child.last_returncode = code
        name = child.spec.name
        if child.restarts < self.max_restarts:
            child.restart_at = time.monotonic() + self.restart_interval
            log.warning("%s: %s exited with status %s; restarting in %gs (restart %d of %d)",
                        self.name, name, code, self.restart_interval, child.restarts + 1,
                        self.max_restarts)
            self._emit(SupervisorEvent("exited", name, returncode=code, restarts=child.restarts,
                                       message=f"exited with status {code}"))
        else:
            child.gave_up = True
            log.error("%s: %s exited with status %s after %d restarts; giving up", self.name,
                      name, code, child.restarts)
            self.failed.set()
            self._emit(SupervisorEvent("gave_up", name, returncode=code, restarts=child.restarts,
                                       message=f"exited with status {code} after "
                                               f"{child.restarts} restarts"))

    def _restart(self, child: _Child, grace: float) -> None:
        child.restart_at = None
        self._terminate([child], time.monotonic() + grace)
        child.gave_up = False
        if self._spawn(child):
            log.warning("%s: restarted %s on request, pid %d", self.name, child.spec.name,
                        child.proc.pid)
            self._emit(SupervisorEvent("restarted", child.spec.name, child.proc.pid,
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
        live = [c for c in group if c.alive()]
        for child in live:
            signal_group(child.proc.pid, signal.SIGTERM)
        while live and time.monotonic() < deadline:
            live = [c for c in live if c.proc.poll() is None]
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
