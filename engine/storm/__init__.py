"""The ``storm`` engine: Storm's execution model in one process, the reference engine.

``heron run --engine storm`` runs a topology here, and the conformance suite holds the
heron engine to what it does. It plays the role Storm's LocalCluster plays for ``sparse
run`` and sits beside the heron engine's role folders as Heron keeps its one-process
``simulator``: one thread per executor (:mod:`.executors`), tasks numbered as Storm numbers
them, bounded queues, every grouping (:mod:`.routing`, :mod:`engine.common.grouping`), Storm's XOR
acker and tick tuples (:mod:`.cluster`). What it shares with the heron engine (task stats,
layout, errors, loggers, the output capture) is in :mod:`engine.common.runtime`.
"""

from engine.common.runtime.capture import OutputCapture
from engine.storm.cluster import LocalCluster, RunResult

__all__ = ["LocalCluster", "OutputCapture", "RunResult"]
