"""A finite multilang spout: emits each sentence ROUNDS times (the first argument), then
nothing. Flux runs it as ``python3 sentences.py ROUNDS`` from the topology's resources/."""

import sys

from pystorm import Spout

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
]


class SentenceSpout(Spout):
    outputs = ["sentence"]

    def initialize(self, storm_conf, context):
        rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
        self.pending = [s for _ in range(rounds) for s in SENTENCES]
        self.next_id = 0

    def next_tuple(self):
        if self.pending:
            self.next_id += 1
            self.emit([self.pending.pop(0)], tup_id=self.next_id)


if __name__ == "__main__":
    SentenceSpout().run()
