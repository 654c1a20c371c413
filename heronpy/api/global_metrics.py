"""heronpy's process-wide counter (``global_metrics.incr('count')``), as GlobalMetrics.java.

Reported as ``user/__auto__/<key>`` by the first heronpy component started in the process
(``init``), every 60 s as Heron's default export interval, or as set by
``heron.metrics.export.interval.sec``. On the heron engine a process is one task, as in
Heron; on the storm engine every task of the topology shares one counter.
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


def init(metrics_collector: Any, metrics_bucket: float) -> None:
    """Register the counter with ``metrics_collector`` once per process."""
    global registered
    with lock:
        if not registered:
            metrics_collector.register_metric(root_name, metricsContainer, metrics_bucket)
            registered = True
