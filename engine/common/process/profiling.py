"""Profile an engine process's main loop when asked to, for finding where per-tuple time
goes in a real run (``bench/README.md``, "Profiling"): with ``HERON_PROFILE_DIR`` set,
each Stream Manager and each instance's executor thread runs under ``cProfile`` and
writes ``<dir>/<kind>-<pid>.prof`` when it stops (read it with ``python -m pstats``).
Times are the thread's CPU time."""

from __future__ import annotations

import cProfile
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PROFILE_DIR_ENV = "HERON_PROFILE_DIR"


@contextmanager
def profiled(kind: str) -> Iterator[None]:
    directory = os.environ.get(PROFILE_DIR_ENV)
    if not directory:
        yield
        return
    # the thread's CPU time, not wall time: a process waiting in poll or descheduled on
    # a busy machine is not charged for it
    profile = cProfile.Profile(time.thread_time)
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        Path(directory).mkdir(parents=True, exist_ok=True)
        profile.dump_stats(str(Path(directory) / f"{kind}-{os.getpid()}.prof"))
