"""Components of the tracker tests' topology: a slow sentence spout (so the topology
uses little CPU while tests read it), a splitter that raises once per process (so the
Topology Master has an exception to report), and a word counter."""

import itertools
import time

from compat.storm_api import Bolt, Spout

SENTENCES = ("the quick brown fox", "jumps over the lazy dog", "heron tracks every tuple",
             "storm topologies run unchanged")

_raised = False


class SentenceSpout(Spout):
    outputs = ["sentence"]

    def initialize(self, conf, ctx):
        self.sentences = itertools.cycle(SENTENCES)
        self.ids = itertools.count()
        self.pause = float(conf.get("tracker_test.pause", 0.004))

    def next_tuple(self):
        time.sleep(self.pause)
        self.emit([next(self.sentences)], tup_id=next(self.ids))


class SplitBolt(Bolt):
    outputs = ["word"]

    def initialize(self, conf, ctx):
        self.seen = 0

    def process(self, tup):
        global _raised
        self.seen += 1
        if not _raised and self.seen == 25:
            _raised = True  # once per process: the restarted component keeps going
            raise ValueError("tracker test: a sentence the splitter refuses")
        for word in tup.values[0].split():
            self.emit([word])


class CountBolt(Bolt):
    outputs = ["word", "count"]

    def initialize(self, conf, ctx):
        self.counts = {}

    def process(self, tup):
        word = tup.values[0]
        self.counts[word] = self.counts.get(word, 0) + 1
        self.emit([word, self.counts[word]])
