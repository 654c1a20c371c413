"""Splits each sentence into words (a pystorm multilang bolt)."""

from pystorm import Bolt


class SplitSentenceBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in tup.values[0].split():
            self.emit([word])


if __name__ == "__main__":
    SplitSentenceBolt().run()
