"""Components of the fault-injection fixture topologies (tests/e2e/heron/test_bad_input.py,
test_activation.py)."""

import os
import time

from compat.storm_api import Bolt, Spout


class Numbers(Spout):
    """Emits ``e2e.limit`` tuples ``[n, key]`` (``e2e.keys`` distinct keys), then is
    exhausted. With ``e2e.gate`` set, emits nothing until that file exists."""

    outputs = ["n", "key"]

    def initialize(self, conf, ctx):
        self.limit = int(conf.get("e2e.limit", 100))
        self.keys = int(conf.get("e2e.keys", 10))
        self.gate = conf.get("e2e.gate")
        self.i = 0

    def next_tuple(self):
        if self.i >= self.limit:
            return
        if self.gate and not os.path.exists(self.gate):
            return
        self.emit([self.i, f"k{self.i % self.keys}"])
        self.i += 1

    def is_exhausted(self):
        return self.i >= self.limit


class Endless(Spout):
    """Never exhausted: one number about every millisecond, forever."""

    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.i = 0

    def next_tuple(self):
        self.emit([self.i])
        self.i += 1
        time.sleep(0.001)


class KeyCount(Bolt):
    """Counts tuples per key; emits ``[key, running count]`` on its leaf stream."""

    outputs = ["key", "count"]

    def initialize(self, conf, ctx):
        self.counts = {}

    def process(self, tup):
        key = tup.values[1]
        self.counts[key] = self.counts.get(key, 0) + 1
        self.emit([key, self.counts[key]])


class Discard(Bolt):
    """Consumes and drops everything."""

    outputs = []

    def process(self, tup):
        pass


class RefusesToStart(Bolt):
    outputs = ["n"]

    def initialize(self, conf, ctx):
        raise RuntimeError("e2e: refuses_to_start cannot initialize")

    def process(self, tup):  # pragma: no cover - never initialized
        self.emit([tup.values[0]])


class RaisesNowAndThen(Bolt):
    """Passes ``[n, key]`` on, and raises at every ``e2e.every``-th tuple it executes
    (counted per instance: a restarted bolt starts counting again)."""

    outputs = ["n", "key"]

    def initialize(self, conf, ctx):
        self.every = int(conf.get("e2e.every", 50))
        self.seen = 0

    def process(self, tup):
        self.seen += 1
        if self.seen % self.every == 0:
            raise ValueError(f"e2e: raising at tuple {tup.values[0]}")
        self.emit([tup.values[0], tup.values[1]])


class NeverOpens(Spout):
    """A spout whose ``open`` (initialize) always raises."""

    outputs = ["n"]

    def initialize(self, conf, ctx):
        raise ConnectionError("e2e: never_opens cannot reach its source")

    def next_tuple(self):  # pragma: no cover - never opened
        pass
