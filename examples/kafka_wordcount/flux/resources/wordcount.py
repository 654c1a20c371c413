"""Counts words and emits ``[word, count]`` on every occurrence (a pystorm multilang
bolt); the last count of each word is its total."""

from collections import Counter

from pystorm import Bolt


class WordCountBolt(Bolt):
    outputs = ["word", "count"]

    def initialize(self, storm_conf, context):
        self.counts = Counter()

    def process(self, tup):
        word = tup.values[0]
        self.counts[word] += 1
        self.emit([word, self.counts[word]])


if __name__ == "__main__":
    WordCountBolt().run()
