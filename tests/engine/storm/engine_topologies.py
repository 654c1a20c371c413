"""Small components the storm-engine tests share, and a helper that runs a topology."""

from __future__ import annotations

import tempfile
from pathlib import Path

from compat.storm_api import ReliableSpout, Spout
from engine.common.plan.compiler import compile_topology
from engine.storm import LocalCluster, OutputCapture


class NumberSpout(Spout):
    """Emits 0..limit-1 (``test.limit``, default 30) without ids, then is exhausted."""

    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.i = 0
        self.limit = conf.get("test.limit", 30)

    def next_tuple(self):
        if self.i < self.limit:
            self.emit([self.i])
            self.i += 1

    def is_exhausted(self):
        return self.i >= self.limit


class TrackedNumberSpout(ReliableSpout):
    """Emits 0..limit-1 with the number as tuple id (replayed by ReliableSpout on fail)."""

    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.i = 0
        self.limit = conf.get("test.limit", 20)

    def next_tuple(self):
        if self.i < self.limit:
            self.emit([self.i], tup_id=self.i)
            self.i += 1

    def is_exhausted(self):
        return self.i >= self.limit


def run_topology(topology_cls, conf=None, time_limit=30, failures=None):
    """Run to completion (or ``time_limit``), keeping every leaf tuple; task-failure lines
    go to ``failures`` when given."""
    compiled = compile_topology(topology_cls, config=conf or {})
    capture = OutputCapture(keep_all=True)
    lines = failures if failures is not None else []
    with tempfile.TemporaryDirectory(prefix="storm-test-logs-") as logs, \
            LocalCluster(compiled, capture=capture, on_task_failure=lines.append,
                         log_dir=Path(logs)) as cluster:
        return cluster.run(time_limit=time_limit)
