"""Starting and signalling engine processes.

Each child gets its own session (so its whole process group, grandchildren included,
can be signalled at once and a Ctrl-C in a terminal reaches only the CLI), /dev/null as
stdin, its log file (appended: restarts add to the same file) as stdout and stderr,
``HERON_PARENT_PID`` for :func:`engine.common.process.parent.die_with_parent`, and a pid file
``<pid_dir>/<name>.pid``. The pid file holds the pid and the process start time, so a
later ``heron kill`` that falls back to pid files never signals an unrelated process
that reused the pid.

``HERON_PURE_PYTHON_KINDS=instance,...`` (process kinds: tmanager, stmgr, metricsmgr,
instance, executor, healthmgr, scheduler) starts the processes of those kinds with
``HERON_PURE_PYTHON=1``, and the others as they are: a mixed run, e.g. pure-Python
instances beside compiled Stream Managers (docs/compiled-path.md). The variable itself
is passed on, so executors apply it to the processes they start.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

import psutil

from engine.common.process.parent import PARENT_PID_ENV
from engine.common.process.spec import ProcessSpec
from engine.config.errors import ConfigError

#: the directory holding the ``engine`` package (and ``compat`` beside it)
_CODE_ROOT = str(Path(__file__).resolve().parents[3])

#: process kinds (comma-separated) to start on the pure-Python tuple path
PURE_KINDS_ENV = "HERON_PURE_PYTHON_KINDS"
#: the process kinds, named as engine.executor.commands names their roles
PROCESS_KINDS = ("tmanager", "stmgr", "metricsmgr", "instance", "executor", "healthmgr",
                 "scheduler")


def process_kind(name: str) -> str | None:
    """The kind of engine process a process name (engine.common.launch naming) is, or None."""
    if name == "heron-tmanager":
        return "tmanager"
    if name == "heron-healthmgr":
        return "healthmgr"
    if name == "scheduler":
        return "scheduler"
    for prefix, kind in (("stmgr-", "stmgr"), ("metricsmgr-", "metricsmgr"),
                         ("executor-", "executor"), ("container_", "instance")):
        if name.startswith(prefix):
            return kind
    return None


def pure_kinds(env: dict[str, str]) -> set[str]:
    """The kinds ``HERON_PURE_PYTHON_KINDS`` in ``env`` names; ``ConfigError`` (one clean
    line from ``heron run``) for an unknown one: a typo must not silently run the
    compiled path."""
    kinds = {k.strip() for k in env.get(PURE_KINDS_ENV, "").split(",") if k.strip()}
    unknown = sorted(kinds - set(PROCESS_KINDS))
    if unknown:
        raise ConfigError(f"{PURE_KINDS_ENV}: unknown process kind(s) {', '.join(unknown)}; "
                         f"choose from {', '.join(PROCESS_KINDS)}")
    return kinds


def with_code_root(env: dict[str, str]) -> dict[str, str]:
    """``env`` with this code's root at the end of ``PYTHONPATH``: a child started as
    ``python -m engine....`` imports the same engine as its parent even when the parent
    runs from a checkout that is not pip-installed (``python bench/wordcount.py``); an
    installed copy on the path still comes first."""
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if _CODE_ROOT not in parts:
        env["PYTHONPATH"] = os.pathsep.join([*parts, _CODE_ROOT])
    return env


def spawn(spec: ProcessSpec, pid_dir: Path | str | None = None,
          extra_env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``spec`` in a new session; write its pid file when ``pid_dir`` is given.
    ``extra_env`` is added to the process's environment (the supervisor's progress file)."""
    log_path = Path(spec.log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = with_code_root(dict(os.environ if spec.env is None else spec.env))
    env.update(extra_env or {})
    if process_kind(spec.name) in pure_kinds(env):
        env["HERON_PURE_PYTHON"] = "1"
    env[PARENT_PID_ENV] = str(os.getpid())
    with open(log_path, "ab", buffering=0) as log:
        proc = subprocess.Popen(list(spec.argv), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, env=env,
                                cwd=str(spec.cwd) if spec.cwd else None,
                                start_new_session=True, close_fds=True)
    if pid_dir is not None:
        write_pid_file(Path(pid_dir) / f"{spec.name}.pid", proc.pid)
    return proc


def write_pid_file(path: Path, pid: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        started = psutil.Process(pid).create_time()
    except psutil.Error:
        started = 0.0
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(f"{pid}\n{started!r}\n")
    os.replace(tmp, path)


def read_pid_file(path: Path) -> psutil.Process | None:
    """The live process a pid file names, or None (no file, dead, or pid reused)."""
    try:
        lines = path.read_text().split()
        pid = int(lines[0])
        started = float(lines[1]) if len(lines) > 1 else None
    except (OSError, ValueError, IndexError):
        return None
    if pid <= 1 or pid == os.getpid():
        return None
    try:
        proc = psutil.Process(pid)
        if started and abs(proc.create_time() - started) > 0.05:
            return None
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc
    except psutil.Error:
        return None


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to a process group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return False


def group_alive(pgid: int) -> bool:
    return signal_group(pgid, 0)


def stop_groups(pgids: Iterable[int], grace: float) -> None:
    """SIGTERM the process groups, wait up to ``grace`` seconds for them to empty, then
    SIGKILL what is left. For groups whose leaders are not our children (pid files)."""
    pgids = [p for p in pgids if p > 1 and p != os.getpgid(0)]
    for pgid in pgids:
        signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_group_has_live(p) for p in pgids):
        time.sleep(0.05)
    for pgid in pgids:
        signal_group(pgid, signal.SIGKILL)


def _group_has_live(pgid: int) -> bool:
    """True while a non-zombie member of the group exists."""
    if not group_alive(pgid):
        return False
    for proc in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                return True
        except (OSError, psutil.Error):
            continue
    return False
