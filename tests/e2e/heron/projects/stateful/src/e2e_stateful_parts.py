"""A stateful word count for the effectively-once tests: a replayable spout over a
deterministic corpus (its position in state), a stateless split, a counting bolt
keeping its counts in state, and a bolt that raises once (a flag file makes it once per
run, across rollbacks)."""

from __future__ import annotations

import os
import random
import time

from compat.connectors import FileSink, FileSpout, RedisSink, RedisStreamSpout
from compat.storm_api import Bolt, Spout, StatefulComponent

WORDS = ["apple", "banana", "cherry", "date", "elder", "fig", "grape", "kiwi", "lemon",
         "mango", "nut", "olive", "pear", "quince", "rye", "sage"]


def sentence(i: int) -> str:
    rng = random.Random(i)
    return " ".join(rng.choice(WORDS) for _ in range(1 + i % 5))


def expected_counts(n: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    for i in range(n):
        for word in sentence(i).split():
            counts[word] = counts.get(word, 0) + 1
    return counts


class Pace:
    """A spout's pause after each call: ``e2e.pause_ms``; with ``e2e.fast_flag`` (a file
    path) set, ``e2e.fast_pause_ms`` (default 1) instead once that file exists, so a
    test can keep a run slow while it acts on it (kills, say) and then let it end
    quickly. A task started after the file appeared is fast from its start."""

    def __init__(self, conf):
        self.pause = float(conf.get("e2e.pause_ms", 2)) / 1000.0
        self.fast_flag = conf.get("e2e.fast_flag") or None
        self.fast_pause = float(conf.get("e2e.fast_pause_ms", 1)) / 1000.0

    def wait(self):
        if self.fast_flag is not None and os.path.exists(self.fast_flag):
            self.pause, self.fast_flag = self.fast_pause, None
        if self.pause:
            time.sleep(self.pause)


class SentenceSpout(StatefulComponent, Spout):
    """Emits sentences 0..n-1 (``e2e.sentences``), ``e2e.per_call`` per next_tuple, at
    most one call every ``e2e.pause_ms`` (see ``Pace``); the next sentence's index is its
    state."""

    outputs = ["sentence"]

    def init_state(self, stateful_state):
        self.state = stateful_state

    def initialize(self, conf, ctx):
        self.n = int(conf.get("e2e.sentences", 2000))
        self.per_call = int(conf.get("e2e.per_call", 5))
        self.pace = Pace(conf)
        self.state.setdefault("next", 0)
        #: at-least-once (for comparison): sentences emitted with their index as id, a
        #: failed one emitted again
        self.reliable = conf.get("topology.reliability.mode") == "ATLEAST_ONCE"
        self.replay: list[int] = []
        self.pending: set[int] = set()

    def next_tuple(self):
        i = self.state["next"]
        for _ in range(self.per_call):
            if self.replay:
                j = self.replay.pop()
                self.emit([sentence(j)], tup_id=j)
                continue
            if i >= self.n:
                break
            if self.reliable:
                self.pending.add(i)
                self.emit([sentence(i)], tup_id=i)
            else:
                self.emit([sentence(i)])
            i += 1
        self.state["next"] = i
        self.pace.wait()

    def ack(self, tup_id):
        self.pending.discard(tup_id)

    def fail(self, tup_id):
        self.replay.append(tup_id)

    def is_exhausted(self):
        return self.state["next"] >= self.n and not self.replay and not self.pending


class SplitBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in tup.values[0].split():
            self.emit([word])


class CountBolt(StatefulComponent, Bolt):
    """Counts in state; emits (word, count) after each update. With ``e2e.raise_after``
    set, the task raises once after that many words, if ``e2e.raise_flag`` does not exist
    yet (it creates it: once per run)."""

    outputs = ["word", "count"]

    def init_state(self, stateful_state):
        self.state = stateful_state

    def initialize(self, conf, ctx):
        self.raise_after = int(conf.get("e2e.raise_after", 0))
        self.flag = conf.get("e2e.raise_flag")
        #: slow for the first ``e2e.slow_tuples`` words (``e2e.slow_ms`` each): backpressure
        self.slow_secs = float(conf.get("e2e.slow_ms", 0)) / 1000.0
        self.slow_tuples = int(conf.get("e2e.slow_tuples", 0))
        self.seen = 0

    def process(self, tup):
        if self.seen < self.slow_tuples:
            time.sleep(self.slow_secs)
        word = tup.values[0]
        count = self.state.get(word, 0) + 1
        self.state[word] = count
        self.seen += 1
        if self.raise_after and self.seen == self.raise_after and self.flag \
                and not os.path.exists(self.flag):
            open(self.flag, "w").close()
            raise RuntimeError(f"e2e: injected failure after {self.seen} words")
        self.emit([word, count])


class CountFiles(FileSink):
    """The counts, exactly once, in committed files (``heron.connectors.file.sink.dir``)."""


class CountList(RedisSink):
    """The counts, exactly once, appended to a Redis list (``heron.connectors.redis.*``)."""


class PacedFileSpout(FileSpout):
    """The shipped file spout (position: file and byte offset, in state), slowed down by
    ``e2e.pause_ms`` after each batch of lines (see ``Pace``) so a run lasts long enough
    for kills."""

    outputs = ["sentence"]

    def initialize(self, conf, ctx):
        super().initialize(conf, ctx)
        self.pace = Pace(conf)

    def next_tuple(self):
        super().next_tuple()
        self.pace.wait()


def write_corpus(directory, n: int, files: int) -> list[str]:
    """``files`` copies of sentences 0..n-1, one per line: what the file spouts read."""
    import os

    os.makedirs(directory, exist_ok=True)
    paths = []
    for k in range(files):
        path = os.path.join(directory, f"corpus-{k}.txt")
        with open(path, "w", encoding="utf-8") as out:
            for i in range(n):
                out.write(sentence(i) + "\n")
        paths.append(path)
    return paths


class SentenceStream(RedisStreamSpout):
    """The shipped Redis stream spout, emitting each entry's ``sentence`` field."""

    outputs = ["sentence"]


class CountHash(RedisSink):
    """The latest count of each word, exactly once, in a Redis hash (kind ``hash``)."""


class KeyedCountBolt(StatefulComponent, Bolt):
    """Counts in keyed state (``state.keyed()``, keyed by the fields grouping's word):
    the counts move with their words when the bolt's parallelism changes. Emits
    (word, count) after each update."""

    outputs = ["word", "count"]

    def init_state(self, stateful_state):
        self.counts = stateful_state.keyed()

    def initialize(self, conf, ctx):
        #: ``e2e.count_ms`` per word: a bolt that cannot keep up (the Health Manager test)
        self.delay = float(conf.get("e2e.count_ms", 0)) / 1000.0

    def process(self, tup):
        if self.delay:
            time.sleep(self.delay)
        word = tup.values[0]
        count = self.counts.get(word, 0) + 1
        self.counts[word] = count
        self.emit([word, count])


class KeyedCountBoltV2(KeyedCountBolt):
    """New code for the same state: emits ("v2:" + word, count)."""

    def emit(self, tup, *args, **kwargs):
        word, count = tup
        return super().emit([f"v2:{word}", count], *args, **kwargs)
