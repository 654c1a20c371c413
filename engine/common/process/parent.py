"""Children that die with their parent.

Every engine process calls :func:`die_with_parent` first thing, so killing an executor
(even with SIGKILL) takes its container down, and killing the scheduler takes the
executors down: nothing outlives the process that is responsible for it.

Three layers, because each one alone has a hole:

* ``prctl(PR_SET_PDEATHSIG, SIGTERM)`` makes the kernel signal us when the parent
  *thread* that forked us exits (which is why the supervisor spawns from one
  long-lived thread);
* it cannot cover a parent that died before the prctl call, so we compare
  ``getppid()`` with ``HERON_PARENT_PID`` (set by the spawner) and exit at once when
  they differ;
* a daemon thread polls ``getppid()`` every 0.5 s as a backstop (non-Linux systems,
  a prctl that failed, a signal the process blocked).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import sys
import threading
import time

PARENT_PID_ENV = "HERON_PARENT_PID"
PR_SET_PDEATHSIG = 1
POLL_SECS = 0.5
#: after asking ourselves to stop (SIGTERM) because the parent is gone, how long the
#: process may take to stop gracefully before the watcher ends it outright
ORPHAN_GRACE_SECS = 20.0

log = logging.getLogger("heron.process")
_watcher: threading.Thread | None = None


def _set_pdeathsig(sig: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def expected_parent() -> int | None:
    """The pid of the process that spawned us, as the spawner recorded it."""
    raw = os.environ.get(PARENT_PID_ENV)
    try:
        return int(raw) if raw else None
    except ValueError:
        return None


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Arrange for this process to receive ``sig`` (default SIGTERM) when its parent
    dies; exit at once (status 1) if the parent is already gone.

    Without ``HERON_PARENT_PID`` (started by hand) the current parent is watched.
    Idempotent.
    """
    global _watcher
    expected = expected_parent()
    if expected is None:
        expected = os.getppid()
    _set_pdeathsig(sig)
    if os.getppid() != expected:
        # The parent died before (or while) we set the death signal.
        os._exit(1)
    if _watcher is not None and _watcher.is_alive():
        return

    def watch() -> None:
        while os.getppid() == expected:
            time.sleep(POLL_SECS)
        log.warning("parent process %d is gone; stopping", expected)
        try:
            os.kill(os.getpid(), sig)
        except OSError:
            os._exit(1)
        time.sleep(ORPHAN_GRACE_SECS)
        os._exit(1)

    _watcher = threading.Thread(target=watch, name="parent-watch", daemon=True)
    _watcher.start()
