"""PacedStatefulWordSpout: StatefulWordSpout (its position in its state) for long runs.
It emits ``e2e.rounds`` rounds of WORDS, one word every ``e2e.pause_ms`` until the file
``e2e.fast_flag`` exists (then as fast as it can), and says when it is done
(``is_exhausted``, the engines' extension), so a run under kills ends by itself."""

import os
import time

from heron_examples.spout.stateful_word_spout import WORDS, StatefulWordSpout


class PacedStatefulWordSpout(StatefulWordSpout):
    def initialize(self, config, context):
        super().initialize(config, context)
        self.total = int(config.get('e2e.rounds', 40)) * len(WORDS)
        self.pause = float(config.get('e2e.pause_ms', 0)) / 1000.0
        self.fast_flag = config.get('e2e.fast_flag')
        self.next_at = 0.0

    def next_tuple(self):
        if self.position >= self.total:
            return
        if self.pause and not (self.fast_flag and os.path.exists(self.fast_flag)):
            now = time.monotonic()
            if now < self.next_at:
                return
            self.next_at = now + self.pause
        self.emit([WORDS[self.position % len(WORDS)]], tup_id=self.position)
        self.position += 1

    def is_exhausted(self):
        return self.position >= self.total
