"""Components of the groupings fixture topology.

``TaggedNumbers`` emits ``e2e.limit`` tuples ``[n, key, src_task]`` on ``default`` and
``[n, target_task, src_task]`` on the direct stream ``direct`` (``direct_task=target``,
targets taken in turn from the tasks of ``direct_sink``), then is exhausted. ``Sink``
emits ``[its task id, *input values]`` on its leaf stream, so the captured outputs say
which task got which tuple.
"""

from compat.storm_api import Bolt, Spout, Stream

KEYS = 17


class TaggedNumbers(Spout):
    outputs = [Stream(["n", "key", "src"]),
               Stream(["n", "target", "src"], name="direct", direct=True)]

    def initialize(self, conf, ctx):
        self.limit = int(conf.get("e2e.limit", 300))
        self.i = 0
        self.targets = sorted(int(t) for t, c in ctx["task->component"].items()
                              if c == "direct_sink")

    def next_tuple(self):
        if self.i >= self.limit:
            return
        n = self.i
        self.emit([n, f"k{n % KEYS}", self.task_id])
        target = self.targets[n % len(self.targets)]
        self.emit([n, target, self.task_id], stream="direct", direct_task=target)
        self.i += 1

    def is_exhausted(self):
        return self.i >= self.limit


class Sink(Bolt):
    outputs = [Stream(["task", "n", "x", "src"])]

    def process(self, tup):
        self.emit([self.task_id, *tup.values])
