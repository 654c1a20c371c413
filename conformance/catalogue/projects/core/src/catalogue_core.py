"""Components of the conformance catalogue's core topologies.

Spouts read a finite fixture (JSON lines ``{"values": [...]}``) named by the option
``conformance.input.<component>`` (or ``conformance.input`` for every spout), split it
between their tasks by position, and report ``is_exhausted()`` once it is all emitted,
so a run ends by itself on both engines. Bolts emit values that are a pure function of
their input, or their task's *index* within the component (0, 1, ...), which the
groupings fix, unlike task ids, which each engine numbers its own way.
"""

import json
import time

from compat.storm_api import BatchingBolt, Bolt, ReliableSpout, Spout, Stream


def read_fixture(path):
    """The rows of a fixture file, as ``{"values": [...], "stream": ...}`` dicts."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("values"), list):
                raise ValueError(f"{path}:{number}: a fixture row is {{\"values\": [...]}}")
            rows.append(row)
    return rows


def component_tasks(context, component):
    """The task ids of ``component``, sorted (Storm's order of task indexes)."""
    return sorted(int(t) for t, c in context["task->component"].items() if c == component)


class FixtureSpout(Spout):
    """Emits its share of the fixture's rows, each on its row's stream (``default``).

    ``conformance.linger.secs`` keeps the spout from reporting exhaustion until that
    long after its last emit: a finite at-most-once run has no acks to wait for, so
    this is how tick-driven bolts (BatchingBolt) get to flush before the run ends.
    """

    outputs = ["n", "key"]
    #: emit with a tuple id (the row's first value) so the tuple is tracked
    reliable = False

    def initialize(self, conf, ctx):
        name = self.component_name
        path = conf.get(f"conformance.input.{name}") or conf.get("conformance.input")
        if not path:
            raise ValueError(f"spout {name!r}: no fixture; set the option "
                             f"conformance.input.{name} or conformance.input")
        tasks = component_tasks(ctx, name)
        self.rows = read_fixture(path)[tasks.index(self.task_id)::len(tasks)]
        self.position = 0
        self.linger = float(conf.get("conformance.linger.secs", 0))
        self.last_emit = time.monotonic()
        self.setup(conf, ctx)

    def setup(self, conf, ctx):
        """Subclasses' extra initialization."""

    def next_tuple(self):
        if self.position >= len(self.rows):
            return
        row = self.rows[self.position]
        self.position += 1
        self.emit_row(row["values"], row.get("stream"))
        self.last_emit = time.monotonic()

    def emit_row(self, values, stream):
        if self.reliable:
            self.emit(values, tup_id=values[0], stream=stream)
        else:
            self.emit(values, stream=stream)

    def is_exhausted(self):
        return (self.position >= len(self.rows)
                and time.monotonic() - self.last_emit >= self.linger)


class LetterSpout(FixtureSpout):
    outputs = ["letter"]


class DirectingSpout(FixtureSpout):
    """Also emits every row ``[n, target]`` on the direct stream ``direct``, straight to
    task number ``target = n % k`` of ``direct_sink`` (k tasks)."""

    outputs = [Stream(["n", "key"]), Stream(["n", "target"], name="direct", direct=True)]

    def setup(self, conf, ctx):
        self.targets = component_tasks(ctx, "direct_sink")

    def emit_row(self, values, stream):
        self.emit(values)
        n = values[0]
        target = n % len(self.targets)
        self.emit([n, target], stream="direct", direct_task=self.targets[target])


class ParitySpout(FixtureSpout):
    """Emits ``[n]`` on the stream ``even`` or ``odd``."""

    outputs = [Stream(["n"], name="even"), Stream(["n"], name="odd")]

    def emit_row(self, values, stream):
        n = values[0]
        self.emit([n], stream="even" if n % 2 == 0 else "odd")


class ReliableNumbers(ReliableSpout, FixtureSpout):
    """A ReliableSpout over the fixture: every row is emitted with its ``n`` as the tuple
    id and replayed (up to ``max_fails`` times) when it fails."""

    reliable = True


class IndexedBolt(Bolt):
    def initialize(self, conf, ctx):
        self.index = component_tasks(ctx, self.component_name).index(self.task_id)


class Sink(IndexedBolt):
    """``[task index, *input values]``: which task got the tuple."""

    outputs = ["task", "n", "x"]

    def process(self, tup):
        self.emit([self.index, *tup.values])


class Doubler(Bolt):
    outputs = ["n", "double"]

    def process(self, tup):
        n = tup.values[0]
        self.emit([n, 2 * n])


class Squarer(Bolt):
    outputs = ["n", "square"]

    def process(self, tup):
        n = tup.values[0]
        self.emit([n, n * n])


class Merge(Bolt):
    """``[source component, first value]`` of tuples from several spouts."""

    outputs = ["source", "value"]

    def process(self, tup):
        self.emit([tup.component, tup.values[0]])


class Twice(Bolt):
    """Emits every input tuple twice."""

    outputs = ["n", "key"]

    def process(self, tup):
        self.emit(list(tup.values))
        self.emit(list(tup.values))


class Router(Bolt):
    """Reads the ``even`` and ``odd`` streams; emits ``[n, parity stream]`` on ``small``
    (n < 50) or ``large``, and ``[n]`` on ``default``."""

    outputs = [Stream(["n", "parity"], name="small"), Stream(["n", "parity"], name="large"),
               Stream(["n"])]

    def process(self, tup):
        n = tup.values[0]
        self.emit([n, tup.stream], stream="small" if n < 50 else "large")
        self.emit([n])


class Left(Bolt):
    outputs = ["n", "left"]

    def process(self, tup):
        n = tup.values[0]
        self.emit([n, n + 1])


class Right(Bolt):
    outputs = ["n", "right"]

    def process(self, tup):
        n = tup.values[0]
        self.emit([n, 2 * n])


class Join(Bolt):
    """Joins the two halves of ``n`` (fields-grouped on ``n``, so both reach one task)."""

    outputs = ["n", "left", "right"]

    def initialize(self, conf, ctx):
        self.halves = {}

    def process(self, tup):
        n = tup.values[0]
        half = self.halves.setdefault(n, {})
        half[tup.component] = tup.values[1]
        if len(half) == 2:
            del self.halves[n]
            self.emit([n, half["left"], half["right"]])


class Flaky(Bolt):
    """Emits ``[n]``, then fails every fourth tuple (n % 4 == 0): under at-most-once the
    fail changes nothing, since an id-less spout tuple is never replayed."""

    outputs = ["n"]
    auto_ack = False

    def process(self, tup):
        n = tup.values[0]
        self.emit([n])
        if n % 4 == 0:
            self.fail(tup)
        else:
            self.ack(tup)


class Picky(Bolt):
    """Fails the first delivery of every fifth ``n`` (n % 5 == 0) and processes the
    replay: under at-least-once each ``n`` is emitted exactly once, after one replay."""

    outputs = ["n", "key"]
    auto_ack = False

    def initialize(self, conf, ctx):
        self.failed_once = set()

    def process(self, tup):
        n = tup.values[0]
        if n % 5 == 0 and n not in self.failed_once:
            self.failed_once.add(n)
            self.fail(tup)
            return
        self.emit(list(tup.values))
        self.ack(tup)


class Relay(Bolt):
    """Passes ``[n]`` on, anchored to its input."""

    outputs = ["n"]

    def process(self, tup):
        self.emit([tup.values[0]])


class KeyTotals(BatchingBolt):
    """Batches by key; on the tick after a batch fills, emits ``[key, sum of n]``."""

    outputs = ["key", "total"]
    ticks_between_batches = 1

    def group_key(self, tup):
        return tup.values[1]

    def process_batch(self, key, tups):
        self.emit([key, sum(t.values[0] for t in tups)])


class Exclaim(Bolt):
    outputs = ["n", "word"]

    def process(self, tup):
        n, word = tup.values
        self.emit([n, word + "!"])
