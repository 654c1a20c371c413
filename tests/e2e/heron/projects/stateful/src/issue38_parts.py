"""Parts for issue 38's sink-rescale and windowed-bolt tests.

``RecordSpout`` emits the records ``"<spout index>:<i>"`` for ``i`` in ``0 ..
e2e.records - 1`` (its position is its state; the index is the task's position among the
spout's tasks, which a renumbering keeps), ``e2e.per_call`` per call of ``next_tuple``
and at most one call every ``e2e.pause_ms`` (``Pace``), each with ``e2e.pad_bytes`` of
padding so that the bytes the backpressure watermarks count are a few hundred records,
not thousands. With ``e2e.restore_ms`` set, a task given restored state (a rollback, not
the first start) takes that long to start, as a source slow to seek back would: the
whole topology then waits that long, restored, for processing to start.

``SlowFileSink`` and ``SlowRedisSink`` are the shipped sinks, taking ``e2e.sink_ms`` per
tuple (a sleep) so that they cannot keep up with the spouts: their Stream Manager goes
into backpressure. They write the record only (the padding is dropped). With
``e2e.stall_dir`` set, the sink's first task (index 0) can also be stalled once per step
``k``: once the test has created ``stall-<k>`` there, the task's next checkpoint save
(``pre_save``) writes its checkpoint id to ``stalled-<k>``, and its next tuple then waits
until the test creates ``release-<k>`` (60 s at most). That checkpoint can complete (the
task has saved), but the news that it is consistent waits behind the data queued for
the stalled task, so the task has not committed its transaction of it (``post_save``)
when a rollback comes: the rollback's restore must commit it.

``WindowCountBolt`` counts the keys it receives in its state and, on each tick tuple
(``topology.tick.tuple.freq.secs``), flushes the window: ``(task index, window number,
key, count)`` for each key seen since the last tick, then clears it (what a windowed
aggregation does). Its window number is in its state too.
"""

from __future__ import annotations

import os
import time

from e2e_stateful_parts import Pace

from compat.connectors import FileSink, RedisSink
from compat.storm_api import Bolt, Spout, StatefulComponent


def task_index(ctx) -> int:
    """The task's position among its component's tasks (task-id order)."""
    mine = ctx["componentid"]
    tasks = sorted(int(t) for t, c in ctx["task->component"].items() if c == mine)
    return tasks.index(int(ctx["taskid"]))


def record_key(i: int) -> str:
    """The key of a spout's ``i``-th record (for the windowed bolt): one of 12."""
    return f"k{(i * 7) % 12}"


class RecordSpout(StatefulComponent, Spout):
    outputs = ["record", "key", "pad"]

    def init_state(self, stateful_state):
        self.state = stateful_state

    def initialize(self, conf, ctx):
        self.n = int(conf.get("e2e.records", 10_000))
        self.per_call = int(conf.get("e2e.per_call", 10))
        self.pad = "." * int(conf.get("e2e.pad_bytes", 0))
        self.pace = Pace(conf)
        self.index = task_index(ctx)
        restore_secs = float(conf.get("e2e.restore_ms", 0)) / 1000.0
        if restore_secs and "next" in self.state:
            time.sleep(restore_secs)  # a source slow to seek back to a restored position
        self.state.setdefault("next", 0)

    def next_tuple(self):
        i = self.state["next"]
        for _ in range(self.per_call):
            if i >= self.n:
                break
            self.emit([f"{self.index}:{i}", record_key(i), self.pad])
            i += 1
        self.state["next"] = i
        self.pace.wait()

    def is_exhausted(self):
        return self.state["next"] >= self.n


class _Slow:
    """A sink's per-tuple sleep (``e2e.sink_ms``) and its one-off stalls (above)."""

    def initialize(self, conf, ctx):
        super().initialize(conf, ctx)
        self.sink_secs = float(conf.get("e2e.sink_ms", 0)) / 1000.0
        stall_dir = conf.get("e2e.stall_dir")
        self.stall_dir = stall_dir if stall_dir and task_index(ctx) == 0 else None
        self.stall_step: str | None = None

    def _step_to_stall(self):
        """The step ``k`` whose stall was asked for and not released yet, if any."""
        for name in sorted(os.listdir(self.stall_dir)):
            if name.startswith("stall-"):
                k = name[len("stall-"):]
                if not os.path.exists(os.path.join(self.stall_dir, f"release-{k}")) and \
                        not os.path.exists(os.path.join(self.stall_dir, f"stalled-{k}")):
                    return k
        return None

    def pre_save(self, checkpoint_id):
        super().pre_save(checkpoint_id)
        if self.stall_dir is not None and self.stall_step is None:
            k = self._step_to_stall()
            if k is not None:
                self.stall_step = k
                path = os.path.join(self.stall_dir, f"stalled-{k}")
                with open(path + ".tmp", "w") as out:
                    out.write(checkpoint_id)
                os.replace(path + ".tmp", path)

    def process(self, tup):
        if self.stall_step is not None:
            release = os.path.join(self.stall_dir, f"release-{self.stall_step}")
            deadline = time.monotonic() + 60
            while not os.path.exists(release) and time.monotonic() < deadline:
                time.sleep(0.02)
            self.stall_step = None
        if self.sink_secs:
            time.sleep(self.sink_secs)
        super().process(tup)


class SlowFileSink(_Slow, FileSink):
    def format_tuple(self, tup):
        return tup.values[0]


class SlowRedisSink(_Slow, RedisSink):
    def to_write(self, tup):
        return [tup.values[0]]


class WindowCountBolt(StatefulComponent, Bolt):
    outputs = ["task", "window", "key", "count"]

    def init_state(self, stateful_state):
        self.state = stateful_state

    def initialize(self, conf, ctx):
        self.index = task_index(ctx)
        self.state.setdefault("window", 0)
        self.state.setdefault("counts", {})

    def process(self, tup):
        key = tup.values[1]
        counts = self.state["counts"]  # per-task state: saved whole at each checkpoint
        counts[key] = counts.get(key, 0) + 1

    def process_tick(self, tup):
        window = self.state["window"]
        for key, count in sorted(self.state["counts"].items()):
            self.emit([self.index, window, key, count])
        self.state["counts"] = {}
        self.state["window"] = window + 1
