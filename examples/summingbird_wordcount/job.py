"""The job: split lines into words and count them into a store.

Written against no platform: ``lines`` may be read by the memory platform, by PySpark,
or (later) by a topology on the storm or heron engine. The functions are module-level
so they have names in error messages and travel to workers by value.
"""

from __future__ import annotations

import re

from compat.summingbird import Producer
from compat.summingbird.monoids import Sum

_WORD = re.compile(r"[a-z']+")


def tokenize(line: str) -> list[tuple[str, int]]:
    """(word, 1) for every word of a line, lower-cased, punctuation dropped."""
    return [(word, 1) for word in _WORD.findall(line.lower())]


def word_count(lines: Producer, store: object) -> Producer:
    """Summingbird's word count: ``flatMap`` to (word, 1), ``sumByKey`` into ``store``."""
    return lines.flat_map(tokenize).sum_by_key(store, Sum()).name("word-counts")
