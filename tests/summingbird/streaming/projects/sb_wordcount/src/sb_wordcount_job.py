"""A Summingbird word count kept in a streamparse-style project's ``src/``.

The topology file plans it with ``plan_topology``; every heron instance imports both
modules, so the functions here are found by name, as any project's bolts are.
"""

from __future__ import annotations

from compat.summingbird import Producer, SQLiteStore, source
from compat.summingbird.monoids import Sum

LINES = [
    "the quick brown fox",
    "jumps over the lazy dog",
    "the dog sleeps",
    "a fox and a dog",
] * 10


def tokenize(line: str) -> list[tuple[str, int]]:
    """(word, 1) for every word of a line."""
    return [(word, 1) for word in line.split()]


def word_count(store_path: str) -> Producer:
    """Count the words of ``LINES`` into a SQLite store."""
    return (source(LINES).flat_map(tokenize).sum_by_key(SQLiteStore(store_path), Sum())
            .name("word-counts"))
