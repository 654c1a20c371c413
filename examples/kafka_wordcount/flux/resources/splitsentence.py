"""Splits the value of each Kafka record (Storm's default translator emits topic,
partition, offset, key, value) into words: a pystorm multilang bolt."""

from pystorm import Bolt


class SplitSentenceBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in (tup.values[4] or "").split():
            self.emit([word])


if __name__ == "__main__":
    SplitSentenceBolt().run()
