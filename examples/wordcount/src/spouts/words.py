"""A spout that picks words from a fixed vocabulary.

Options: ``wordcount.seed`` makes the sequence repeatable; ``wordcount.max_words``
stops the spout after that many words (each task), so a run can end by itself.
"""

import random

from streamparse import Spout

VOCABULARY = (
    "dog cat zebra elephant lion tiger bear wolf fox owl eagle hawk crow raven "
    "salmon trout shark whale dolphin seal otter beaver badger mole rabbit hare "
    "horse donkey camel llama goat sheep cow pig duck goose swan heron crane stork"
).split()


def generate_words(seed, count):
    """The words a spout task with this seed emits, in order (tests use this too)."""
    rng = random.Random(seed)
    return [rng.choice(VOCABULARY) for _ in range(count)]


class WordSpout(Spout):
    outputs = ["word"]

    def initialize(self, stormconf, context):
        seed = stormconf.get("wordcount.seed")
        # Tasks of the same component must not repeat each other's words.
        index = sorted(int(t) for t, c in context["task->component"].items()
                       if c == self.component_name).index(self.task_id)
        self.rng = random.Random(None if seed is None else seed + index)
        self.max_words = stormconf.get("wordcount.max_words")
        self.emitted = 0

    def next_tuple(self):
        if self.max_words is not None and self.emitted >= self.max_words:
            return
        self.emit([self.rng.choice(VOCABULARY)])
        self.emitted += 1

    def is_exhausted(self):
        """Storm's CompletableSpout.isExhausted: lets a finite run end on its own."""
        return self.max_words is not None and self.emitted >= self.max_words
