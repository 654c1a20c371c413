"""heronpy's process-wide counter (``global_metrics.incr('count')``), as GlobalMetrics.java.

Reported as ``user/__auto__/<key>`` (``init``), every 60 s as Heron's default export
interval, or as set by ``heron.metrics.export.interval.sec``. On the heron engine a process
is one task, so the counter is reported once per process, as in Heron. On the storm engine
every task of the topology shares one counter and every task reports it: each report takes
what was counted since the last one (a ``MultiCountMetric`` resets as it is read), so the
reports add up to the count. A task registers it itself, never through another task's
registration, so a run in a process where another run (or a test) registered it before is
reported too.
"""

from __future__ import annotations

import threading
from typing import Any

from heronpy.api.metrics import MultiCountMetric

metricsContainer = MultiCountMetric()
registered = False
root_name = "__auto__"

lock = threading.Lock()


def incr(key: Any, to_add: int = 1) -> None:
    metricsContainer.incr(key, to_add)


def safe_incr(key: Any, to_add: int = 1) -> None:
    with lock:
        metricsContainer.incr(key, to_add)


_registered_with: list[Any] = []


def init(metrics_collector: Any, metrics_bucket: float) -> None:
    """Register the counter with ``metrics_collector`` (once per collector)."""
    global registered
    with lock:
        if not any(c is metrics_collector for c in _registered_with):
            metrics_collector.register_metric(root_name, metricsContainer, metrics_bucket)
            _registered_with.append(metrics_collector)
            del _registered_with[:-64]  # collectors of finished tasks are not kept alive
            registered = True
