"""The scheduler service's own supervisor.

``python -m engine.scheduler --launch PATH`` is this small loop: it runs the service
proper (``--serve``) as its child, in a session of its own watching this process, and
starts it again when it dies after it served, under the engine's restart policy
(engine/common/process/restart_policy.py: at once after a good run, with backoff when it keeps
failing). On Slurm the containers outlive the service and the new one adopts the jobs it
finds instead of submitting duplicates (SlurmScheduler.launch). The local scheduler's
executors are the service's children and die with it (nothing may outlive a killed
topology on one machine), so the new service starts them again: the topology runs again
from its stored plans, and an at-least-once topology replays what was in flight. A child
that never served (its launch failed) is not started again: its status is this
process's, so ``heron submit`` reports it. SIGTERM or SIGINT here is passed on (the child
kills the topology, then both exit).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from engine.common.launch import LaunchSpec
from engine.common.process import PARENT_PID_ENV
from engine.common.process.restart_policy import RestartTracker
from engine.common.process.spawn import with_code_root
from engine.executor.commands import resolve_modules

log = logging.getLogger("heron.scheduler")

#: written by the service once it serves (its pid), in the working dir's pids/
SERVING_MARKER = "scheduler-service.pid"
#: the schedulers whose service is supervised: Slurm's jobs survive the service and are
#: adopted; the local scheduler's executors die with it and are started again
SUPERVISED = ("slurm", "local")


def supervised(scheduler: str) -> bool:
    return scheduler in SUPERVISED


def mark_serving(spec: LaunchSpec) -> None:
    """Called by the service once it serves: from now on a death of it is restarted."""
    path = spec.pid_dir / SERVING_MARKER
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{os.getpid()}\n")


def supervise(spec: LaunchSpec, stopping: threading.Event) -> int:
    """Run the service as a child until it exits for good; its final status."""
    marker = spec.pid_dir / SERVING_MARKER
    marker.unlink(missing_ok=True)
    tracker = RestartTracker("scheduler", spec.restart_policy)
    served_once = False
    try:
        while True:
            child = _start_child(spec)
            tracker.started()
            code = _wait(child, stopping)
            if stopping.is_set() or code == 0:
                return code
            # this child served (the marker names it): its death is no crash loop, and it
            # is started again at once; one that died before serving backs off
            served = _marked_pid(marker) == child.pid
            served_once = served_once or served
            if not served_once:
                return code  # it never served: the launch failed, submit says why
            delay = tracker.failed(f"exited with status {code}", progressed=served)
            log.error("the scheduler service (pid %d) exited with status %d; starting it "
                      "again in %.1fs (%s)", child.pid, code, delay,
                      "it starts the containers again" if spec.scheduler == "local"
                      else "it adopts the running jobs")
            if stopping.wait(delay):
                return 0
    finally:
        marker.unlink(missing_ok=True)


def _marked_pid(marker: Path) -> int | None:
    try:
        return int(marker.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _start_child(spec: LaunchSpec) -> subprocess.Popen:
    env = with_code_root(dict(os.environ))
    env[PARENT_PID_ENV] = str(os.getpid())
    module = resolve_modules()["scheduler"]
    # stdout/stderr inherited: the child logs into this process's scheduler.log
    return subprocess.Popen([spec.python or sys.executable, "-m", module, "--launch",
                             str(spec.path), "--serve"], stdin=subprocess.DEVNULL,
                            cwd=spec.working_dir, env=env, start_new_session=True)


def _wait(child: subprocess.Popen, stopping: threading.Event) -> int:
    """The child's exit status (a signal as 128+N); SIGTERM passed on when stopping."""
    forwarded = False
    while True:
        try:
            code = child.wait(timeout=0.2)
            return 128 - code if code < 0 else code
        except subprocess.TimeoutExpired:
            pass
        if stopping.is_set() and not forwarded:
            forwarded = True
            try:
                child.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass


__all__ = ["SERVING_MARKER", "mark_serving", "supervise", "supervised"]
