"""Counts words; emits each word with its running count."""

from collections import Counter

from streamparse import Bolt


class WordCountBolt(Bolt):
    outputs = ["word", "count"]

    def initialize(self, conf, ctx):
        self.counts = Counter()

    def process(self, tup):
        word = tup.values.word
        self.counts[word] += 1
        self.emit([word, self.counts[word]])
