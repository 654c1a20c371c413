"""A live line of Spark's stage progress while a diff's job runs.

Spark's own console progress bar is off (it would write over rich's display), so a
thread polls the SparkContext's status tracker about twice a second and hands the
caller one line: the active stages with their finished, running and total tasks. The
CLI shows it under the current run; anything else can log it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark import StatusTracker
    from pyspark.sql import SparkSession

__all__ = ["describe_stages", "stage_progress"]

POLL_SECONDS = 0.5


def describe_stages(tracker: StatusTracker) -> str:
    """One line for the active stages of a status tracker (empty when none runs)."""
    parts = []
    for stage_id in sorted(tracker.getActiveStageIds()):
        info = tracker.getStageInfo(stage_id)
        if info is None:
            continue
        parts.append(f"stage {stage_id}: {info.numCompletedTasks}/{info.numTasks} tasks"
                     + (f" ({info.numActiveTasks} running)" if info.numActiveTasks else ""))
    return "; ".join(parts)


@contextlib.contextmanager
def stage_progress(spark: SparkSession, report: Callable[[str], None] | None,
                   label: str = "") -> Iterator[None]:
    """While the body runs, call ``report`` with ``"<label>: <stages>"`` whenever the
    line changes; nothing happens without ``report``."""
    if report is None:
        yield
        return
    tracker = spark.sparkContext.statusTracker()
    stop = threading.Event()

    def poll() -> None:
        last = None
        while not stop.wait(POLL_SECONDS):
            try:
                line = describe_stages(tracker)
            except Exception:  # the context stopping under us: no more lines
                return
            if line and line != last:
                last = line
                report(f"{label}: {line}" if label else line)

    thread = threading.Thread(target=poll, name="spark-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=2)
