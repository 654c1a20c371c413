"""The EFFECTIVELY_ONCE word count the storm engine's checkpoint tests run, and how they
run it: a replayable sentence spout, a split and a counting bolt that fail once on
cue (``maybe_fail``), the shared record each run's components find by its ``test.run``
config key (``REG``), and the readers of what a run stored. Apart from the tests so
that file stays one job (tests/engine/storm/test_effectively_once.py).
"""

from __future__ import annotations

import collections
import itertools
import tempfile
from pathlib import Path

from compat.storm_api import Bolt, Grouping, Spout, StatefulComponent, Topology
from engine.common.plan.compiler import compile_topology
from engine.common.serialization import serializer_for_config
from engine.config.checkpointing import checkpointing
from engine.statefulstorage import open_storage
from engine.statefulstorage.codec import decode_state
from engine.storm import LocalCluster, OutputCapture
from engine.storm.checkpoint_store import MARKER_COMPONENT, checkpoint_number

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
] * 8
HOLD_AT = len(SENTENCES) // 2

#: per test run (conf "test.run"): what components share across their rebuilds
REG: dict[str, dict] = {}
_runs = itertools.count()


def expected_counts(sentences=SENTENCES):
    return collections.Counter(w for s in sentences for w in s.split())


def maybe_fail(reg, where):
    """Raise once per test run in component ``where``, at its ``fail_after``-th call
    after the spout was let go past the first half (the failure point is an event)."""
    if reg.get("fail_in") != where or reg["failed"]:
        return
    if reg.get("hold_at") is not None and reg.get("saved_pos", -1) < reg["hold_at"]:
        return
    reg["seen"] = reg.get("seen", 0) + 1
    if reg["seen"] >= reg["fail_after"]:
        reg["failed"] = True
        raise RuntimeError(f"injected failure in {where}")


class SentenceSpout(StatefulComponent, Spout):
    """Replayable: its position lives in state; it seeks back to it in init_state. Holds
    the second half back until a checkpoint with the first half emitted is consistent."""

    outputs = ["sentence"]

    def init_state(self, state):
        self.state = state
        self.pos = state.get("pos", 0)

    def initialize(self, conf, ctx):
        self.reg = REG[conf["test.run"]]
        self.reg["spout_starts"].append(self.pos)
        self.sentences = self.reg["sentences"]
        self.hold_at = self.reg.get("hold_at")

    def next_tuple(self):
        if self.pos >= len(self.sentences):
            return
        if (self.hold_at is not None and self.pos >= self.hold_at
                and self.reg.get("saved_pos", -1) < self.hold_at):
            return  # wait for a checkpoint that covers the first half
        maybe_fail(self.reg, "sentences")
        self.emit([self.sentences[self.pos]])
        self.pos += 1

    def pre_save(self, checkpoint_id):
        self.state["pos"] = self._saving = self.pos

    def post_save(self, checkpoint_id):
        self.reg["saved_pos"] = max(self.reg.get("saved_pos", -1), self._saving)

    def is_exhausted(self):
        return self.pos >= len(self.sentences)


class SplitBolt(Bolt):
    outputs = ["word"]

    def initialize(self, conf, ctx):
        self.reg = REG[conf["test.run"]]

    def process(self, tup):
        maybe_fail(self.reg, "split")
        for word in tup.values.sentence.split():
            self.emit([word])


class CountBolt(StatefulComponent, Bolt):
    """Counts in state; records its counts at every consistent checkpoint."""

    outputs = ["word", "count"]

    def init_state(self, state):
        self.counts = state

    def initialize(self, conf, ctx):
        self.reg = REG[conf["test.run"]]

    def process(self, tup):
        word = tup.values.word
        maybe_fail(self.reg, "count")
        self.counts[word] = self.counts.get(word, 0) + 1
        self.emit([word, self.counts[word]])

    def post_save(self, checkpoint_id):
        self.reg["final"][self.task_id] = dict(self.counts)


class WordCount(Topology):
    sentences = SentenceSpout.spec()
    split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)


def new_run(**extra):
    """A fresh shared record and its config key."""
    run_id = f"run-{next(_runs)}"
    REG[run_id] = {"sentences": list(SENTENCES), "hold_at": HOLD_AT, "failed": False,
                   "final": {}, "spout_starts": [], "committed": [], "prepared": {},
                   **extra}
    return run_id, REG[run_id]


def eo_conf(run_id, **extra):
    conf = {"test.run": run_id, "topology.reliability.mode": "EFFECTIVELY_ONCE",
            "topology.stateful.checkpoint.interval.seconds": 0.05}
    conf.update(extra)
    return conf


def run(topology, conf, state_dir, failures=None):
    compiled = compile_topology(topology, config=conf)
    capture = OutputCapture(keep_all=True)
    lines = failures if failures is not None else []
    with tempfile.TemporaryDirectory(prefix="storm-eo-logs-") as logs, \
            LocalCluster(compiled, capture=capture, on_task_failure=lines.append,
                         log_dir=Path(logs), state_dir=state_dir) as cluster:
        return cluster.run(time_limit=30)


def stored_counts(topology, conf, state_dir, checkpoint_id=None):
    """The count bolt's counts in a stored checkpoint (the newest consistent one)."""
    compiled = compile_topology(topology, config=conf)
    storage = open_storage(checkpointing(conf), topology_name=compiled.plan.name,
                           working_dir=state_dir)
    if checkpoint_id is None:
        checkpoint_id = max(storage.checkpoints(), key=checkpoint_number)
    storage.load(checkpoint_id, MARKER_COMPONENT, 0)  # consistent
    serializer = serializer_for_config(conf)
    total = collections.Counter()
    for task in compiled_tasks(storage, checkpoint_id, "count"):
        total.update(dict(decode_state(storage.load(checkpoint_id, "count", task), serializer)))
    return total


def compiled_tasks(storage, checkpoint_id, component):
    return sorted(int(p.stem) for p in (storage.root / checkpoint_id / component).glob("*.state"))


def final_counts(reg):
    total = collections.Counter()
    for counts in reg["final"].values():
        total.update(counts)
    return total
