"""The backpressure scenario's counting bolt (bench/wordcount.py ``--backpressure``):
:class:`~wordbench.bolt.CountBolt` with a fixed cost per tuple.

``bench.bolt_cost_us`` (microseconds, default 100) is the least time one task spends per
tuple: the task keeps a schedule (``cost`` further per tuple) and sleeps whenever it is
more than a millisecond ahead of it, so each task counts at most ``1e6 / cost`` words a
second, whatever the machine, without burning the CPU the spout and the Stream Managers
need (a busy-wait on 2 shared cores would measure CPU contention, not backpressure). A
task that falls behind its schedule does not catch up in a burst: the schedule restarts
from now.
"""

from __future__ import annotations

import time
from typing import Any

from wordbench.bolt import CountBolt

DEFAULT_COST_US = 100.0
#: sleep only when at least this far ahead of the schedule (sleeps shorter than this
#: overshoot by more than they wait)
SLACK_NS = 1_000_000


class SlowCountBolt(CountBolt):
    def initialize(self, conf: dict, ctx: dict) -> None:
        super().initialize(conf, ctx)
        cost_us = float(conf.get("bench.bolt_cost_us", DEFAULT_COST_US))
        if cost_us <= 0:
            raise ValueError(f"bench.bolt_cost_us must be positive, got {cost_us}")
        self.cost_ns = int(cost_us * 1000)
        self.due = 0

    def process(self, tup: Any) -> None:
        super().process(tup)
        now = time.monotonic_ns()
        due = max(self.due + self.cost_ns, now)  # behind: no burst to catch up
        self.due = due
        if due - now > SLACK_NS:
            time.sleep((due - now) / 1e9)
