"""Word count over a fixture of sentences in Heron's Python API (heronpy), written as
Heron's examples are, for the conformance case that runs it beside its
``heron-migrate --heronpy`` twin.

``SentenceSpout`` emits ``[sid, sentence]`` with ``tup_id=sid`` and reports every ack and
fail it gets on its ``acks`` stream (``[kind, sid]``), replaying a failed sentence;
``SplitSentence`` (fields-grouped on ``sid``, so a replay reaches the task that failed it)
fails the first delivery of every sentence with ``sid % 7 == 3`` and otherwise emits
``[sid, position, word]`` anchored to it and acks it; ``CountWords`` (fields-grouped on
the word) emits the word's running count, anchored, and acks. A heronpy bolt acks, fails
and anchors only when told: the twin must keep that, or streamparse's auto-ack would ack
every tuple a second time.

The fixture's path comes from the option ``conformance.input.sentences``. ``is_exhausted``
is the engines' own end-of-input question (not heronpy's): the run ends once every
sentence is acked.
"""

import json
from collections import Counter

from heronpy.api.bolt.bolt import Bolt
from heronpy.api.spout.spout import Spout
from heronpy.api.stream import Stream

#: the sentences whose first delivery the splitter fails
FAIL_EVERY, FAIL_AT = 7, 3


class SentenceSpout(Spout):
    outputs = ['sid', 'sentence', Stream(fields=['kind', 'sid'], name='acks')]

    def initialize(self, config, context):
        with open(config["conformance.input.sentences"], encoding="utf-8") as fh:
            self.rows = [json.loads(line)["values"] for line in fh if line.strip()]
        self.by_sid = {sid: sentence for sid, sentence in self.rows}
        self.position = 0
        self.replay = []
        self.acked = 0

    def next_tuple(self):
        if self.replay:
            sid = self.replay.pop(0)
        elif self.position < len(self.rows):
            sid = self.rows[self.position][0]
            self.position += 1
        else:
            return
        self.emit([sid, self.by_sid[sid]], tup_id=sid)

    def ack(self, tup_id):
        self.acked += 1
        self.emit(['ack', tup_id], stream='acks')

    def fail(self, tup_id):
        self.emit(['fail', tup_id], stream='acks')
        self.replay.append(tup_id)

    def is_exhausted(self):
        return self.acked >= len(self.rows)


class SplitSentence(Bolt):
    outputs = ['sid', 'position', 'word']

    def initialize(self, config, context):
        self.failed = set()

    def process(self, tup):
        sid, sentence = tup.values
        if sid % FAIL_EVERY == FAIL_AT and sid not in self.failed:
            self.failed.add(sid)
            self.fail(tup)
            return
        for position, word in enumerate(sentence.split()):
            self.emit([sid, position, word], anchors=[tup])
        self.ack(tup)


class CountWords(Bolt):
    outputs = ['word', 'count']

    def initialize(self, config, context):
        self.counts = Counter()

    def process(self, tup):
        word = tup.values[2]
        self.counts[word] += 1
        self.emit([word, self.counts[word]], anchors=[tup])
        self.ack(tup)
