"""CountBolt: counts words (emitting each new count), acks, bumps global_metrics and a
metric of its own."""

from collections import Counter

from heronpy.api import global_metrics
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.metrics import CountMetric, MeanReducer, ReducedMetric


class CountBolt(Bolt):
    outputs = ['word', 'count']

    def initialize(self, config, context):
        self.logger.info("In prepare() of CountBolt")
        self.counter = Counter()
        self.total = 0
        self.ticks = 0
        self.words_metric = CountMetric()
        self.length_metric = ReducedMetric(MeanReducer)
        context.register_metric("words", self.words_metric, 1)
        context.register_metric("word-length", self.length_metric, 1)

    def process(self, tup):
        word = tup.values[0]
        self.counter[word] += 1
        self.total += 1
        global_metrics.safe_incr('count')
        self.words_metric.incr()
        self.length_metric.update(len(word))
        self.emit([word, self.counter[word]], anchors=[tup])
        self.ack(tup)

    def process_tick(self, tup):
        self.ticks += 1
        self.log(f"Current map: {self.counter}")
