"""Word count over a fixture of sentences, written to survive replays.

``SentenceSpout`` is a ReliableSpout emitting ``[sid, sentence]`` with ``sid`` as the
tuple id; ``SplitSentence`` emits ``[sid, position, word]`` anchored to the sentence;
``CountWords`` (fields-grouped on the word) counts each ``(sid, position)`` once and
emits the word's running count for every word it receives. A replayed sentence thus
emits running counts again, but never counts a word twice: the final count per word
is exact even under at-least-once with failures.
"""

import json
from collections import Counter

from compat.storm_api import Bolt, ReliableSpout, Spout, StatefulComponent


def fixture_rows(conf, component_name):
    """The fixture's rows (each line's ``values``), read from the file named by the option
    ``conformance.input.<component>``, or else ``conformance.input``."""
    path = conf.get(f"conformance.input.{component_name}") or conf.get("conformance.input")
    if not path:
        raise ValueError(f"spout {component_name!r}: set the option conformance.input")
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line)["values"] for line in fh if line.strip()]


class SentenceSpout(ReliableSpout):
    outputs = ["sid", "sentence"]

    def initialize(self, conf, ctx):
        self.rows = fixture_rows(conf, self.component_name)
        self.position = 0

    def next_tuple(self):
        if self.position < len(self.rows):
            sid, sentence = self.rows[self.position]
            self.position += 1
            self.emit([sid, sentence], tup_id=sid)

    def is_exhausted(self):
        return self.position >= len(self.rows)


class SplitSentence(Bolt):
    outputs = ["sid", "position", "word"]

    def process(self, tup):
        sid, sentence = tup.values
        for position, word in enumerate(sentence.split()):
            self.emit([sid, position, word])


class CountWords(Bolt):
    outputs = ["word", "count"]

    def initialize(self, conf, ctx):
        self.counts = Counter()
        self.seen = set()

    def process(self, tup):
        sid, position, word = tup.values
        if (sid, position) not in self.seen:
            self.seen.add((sid, position))
            self.counts[word] += 1
        self.emit([word, self.counts[word]])


class RaisingSplit(SplitSentence):
    """A stateless splitter that raises now and then: at every ``conformance.raise.every``-th
    sentence it executes (counted per instance) it emits the first word, then raises. The
    engine restarts it (at once: it made progress) and, under at-least-once, the sentence
    is failed and replayed, so its first word comes out twice; nothing is lost."""

    def initialize(self, conf, ctx):
        self.every = int(conf.get("conformance.raise.every", 7))
        self.executed = 0

    def process(self, tup):
        self.executed += 1
        if self.executed % self.every == 0:
            sid, sentence = tup.values
            words = sentence.split()
            if words:
                self.emit([sid, 0, words[0]])
            raise RuntimeError(f"conformance: splitter raising at sentence {sid}")
        super().process(tup)


class StatefulSentenceSpout(StatefulComponent, Spout):
    """The fixture's sentences, effectively-once: the next row's index is the spout's
    state, so a rollback replays exactly what the restored counts have not seen."""

    outputs = ["sid", "sentence"]

    def init_state(self, stateful_state):
        self.state = stateful_state

    def initialize(self, conf, ctx):
        self.rows = fixture_rows(conf, self.component_name)
        self.state.setdefault("next", 0)

    def next_tuple(self):
        i = self.state["next"]
        if i < len(self.rows):
            self.emit(self.rows[i])
            self.state["next"] = i + 1

    def is_exhausted(self):
        return self.state["next"] >= len(self.rows)


class StatefulCountWords(StatefulComponent, Bolt):
    """Counts in state (no de-duplication needed: a rollback restores the counts with the
    spout's position); emits the word's running count."""

    outputs = ["word", "count"]

    def init_state(self, stateful_state):
        self.counts = stateful_state

    def process(self, tup):
        _, _, word = tup.values
        self.counts[word] = self.counts.get(word, 0) + 1
        self.emit([word, self.counts[word]])


def sentence_of_record(record):
    """The KafkaSpout translator of ``word_count_kafka``: a record's value is a fixture
    row, ``[sid, sentence]`` (JSON, decoded by the spout)."""
    sid, sentence = record.value
    return [sid, sentence]
