"""What each catalogue case must output, computed from its input alone.

One small pure function per case: given the rows of the case's fixtures (by spout), it
returns the rows ``(component, stream, values)`` the topology must emit on the streams
the case compares, as a multiset. These are written from what the topology *means* (a
shuffle reaches some task, a fields grouping the task ``hash % n``, a bolt that emits
twice doubles every row...), never from what an engine printed, so both engines are
judged against the same independent reference.

Columns a case ignores (task indexes under shuffle) are spelled ``None`` here; the
comparison drops them on every side.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import msgpack

Row = tuple[str, str, list[Any]]
Inputs = Mapping[str, Sequence[Sequence[Any]]]

#: parallelism of the sinks of the groupings topology (projects/core/topologies/groupings.py)
SINK_TASKS = {"shuffle_sink": 3, "fields_sink": 3, "all_sink": 2, "global_sink": 2,
              "none_sink": 2, "direct_sink": 2, "local_sink": 2}


def fields_index(value: Any, tasks: int) -> int:
    """The task index a fields grouping on one field sends ``value`` to: the documented
    grouping hash (CRC-32 of the msgpack encoding of the field value) modulo the task
    count (DESIGN, "Wire and messages")."""
    return zlib.crc32(msgpack.packb(value, use_bin_type=True)) % tasks


def _numbers(inputs: Inputs, spout: str = "numbers") -> list[list[Any]]:
    return [list(row) for row in inputs[spout]]


# -- groupings ----------------------------------------------------------------------------
def shuffle(inputs: Inputs) -> list[Row]:
    """Every tuple reaches exactly one task (which one is random: ignored)."""
    return [("shuffle_sink", "default", [None, n, key]) for n, key in _numbers(inputs)]


def fields(inputs: Inputs) -> list[Row]:
    """Every tuple reaches the task its key hashes to; equal keys, one task."""
    tasks = SINK_TASKS["fields_sink"]
    return [("fields_sink", "default", [fields_index(key, tasks), n, key])
            for n, key in _numbers(inputs)]


def all_(inputs: Inputs) -> list[Row]:
    """Every tuple reaches every task."""
    return [("all_sink", "default", [i, n, key]) for n, key in _numbers(inputs)
            for i in range(SINK_TASKS["all_sink"])]


def global_(inputs: Inputs) -> list[Row]:
    """Every tuple reaches the lowest task (index 0)."""
    return [("global_sink", "default", [0, n, key]) for n, key in _numbers(inputs)]


def none(inputs: Inputs) -> list[Row]:
    """None is shuffle: one task each, which one ignored."""
    return [("none_sink", "default", [None, n, key]) for n, key in _numbers(inputs)]


def direct(inputs: Inputs) -> list[Row]:
    """The spout names task ``n % 2`` of the sink; exactly that task gets the tuple."""
    tasks = SINK_TASKS["direct_sink"]
    return [("direct_sink", "default", [n % tasks, n, n % tasks]) for n, _ in _numbers(inputs)]


def local_or_shuffle(inputs: Inputs) -> list[Row]:
    """One task each; on one machine every task is local, so it behaves as shuffle."""
    return [("local_sink", "default", [None, n, key]) for n, key in _numbers(inputs)]


# -- shapes --------------------------------------------------------------------------------
def fan_out(inputs: Inputs) -> list[Row]:
    rows = _numbers(inputs)
    return ([("numbers", "default", [n, key]) for n, key in rows]
            + [("doubler", "default", [n, 2 * n]) for n, _ in rows]
            + [("squarer", "default", [n, n * n]) for n, _ in rows])


def several_spouts(inputs: Inputs) -> list[Row]:
    return ([("merge", "default", ["letters", letter]) for (letter,) in inputs["letters"]]
            + [("merge", "default", ["numbers", n]) for n, _ in inputs["numbers"]])


def twice(inputs: Inputs) -> list[Row]:
    return [("twice", "default", [n, key]) for n, key in _numbers(inputs) for _ in range(2)]


def named_streams(inputs: Inputs) -> list[Row]:
    out: list[Row] = []
    for n, _ in _numbers(inputs):
        parity = "even" if n % 2 == 0 else "odd"
        out.append(("numbers", parity, [n]))
        out.append(("router", "small" if n < 50 else "large", [n, parity]))
        out.append(("router", "default", [n]))
    return out


def diamond(inputs: Inputs) -> list[Row]:
    rows = _numbers(inputs)
    return ([("left", "default", [n, n + 1]) for n, _ in rows]
            + [("right", "default", [n, 2 * n]) for n, _ in rows]
            + [("join", "default", [n, n + 1, 2 * n]) for n, _ in rows])


def empty(inputs: Inputs) -> list[Row]:
    return fan_out(inputs)


# -- reliability ------------------------------------------------------------------------------
def at_most_once(inputs: Inputs) -> list[Row]:
    """Id-less emits are never replayed: the bolt's fails change nothing."""
    rows = _numbers(inputs)
    return ([("numbers", "default", [n, key]) for n, key in rows]
            + [("flaky", "default", [n]) for n, _ in rows])


def reliable(inputs: Inputs) -> list[Row]:
    """Every fifth tuple fails once and is replayed once by the ReliableSpout (so the
    spout emits it twice); the bolt emits every tuple exactly once."""
    out: list[Row] = []
    for n, key in _numbers(inputs):
        out += [("numbers", "default", [n, key])] * (2 if n % 5 == 0 else 1)
        out.append(("picky", "default", [n, key]))
    return out


def replay_after_kill(inputs: Inputs) -> list[Row]:
    """Without failures: each row once on every stream (the kill only adds replays)."""
    rows = _numbers(inputs)
    return ([("numbers", "default", [n, key]) for n, key in rows]
            + [("relay", "default", [n]) for n, _ in rows]
            + [("tail", "default", [n]) for n, _ in rows])


# -- ticks, multi-lang, word count -----------------------------------------------------------
def batching(inputs: Inputs) -> list[Row]:
    """The per-key total of n (the case reduces the batch totals per key by sum)."""
    totals: Counter[str] = Counter()
    for n, key in _numbers(inputs):
        totals[key] += n
    return [("totals", "default", [key, total]) for key, total in sorted(totals.items())]


def multilang(inputs: Inputs) -> list[Row]:
    rows = [list(r) for r in inputs["words"]]
    return ([("shout", "default", [n, word.upper()]) for n, word in rows]
            + [("exclaim", "default", [n, word.upper() + "!"]) for n, word in rows])


def word_count(inputs: Inputs) -> list[Row]:
    """One ``[word, k]`` row for k = 1..count of every word: the running counts of a
    bolt that owns the word (fields grouping), in whatever order the words come."""
    counts = Counter(word for _, sentence in inputs["sentences"] for word in sentence.split())
    return [("count", "default", [word, k]) for word, total in sorted(counts.items())
            for k in range(1, total + 1)]


def split_words(inputs: Inputs) -> list[Row]:
    """One ``[sid, position, word]`` row per word of every sentence (the splitter's output
    once replays are de-duplicated by ``(sid, position)``)."""
    return [("split", "default", [sid, position, word])
            for sid, sentence in inputs["sentences"]
            for position, word in enumerate(sentence.split())]


def heronpy_word_count(inputs: Inputs) -> list[Row]:
    """The heronpy word count (projects/heronpy): every sentence emitted once, and once
    more for those whose first delivery the splitter fails (``sid % 7 == 3``), an ack per
    sentence and a fail per failed delivery on the spout's ``acks`` stream, every word
    once (a failed delivery emits nothing) and every running count."""
    rows: list[Row] = []
    for sid, sentence in inputs["sentences"]:
        failed = sid % 7 == 3
        rows += [("sentences", "default", [sid, sentence])] * (2 if failed else 1)
        rows.append(("sentences", "acks", ["ack", sid]))
        if failed:
            rows.append(("sentences", "acks", ["fail", sid]))
        rows += [("split", "default", [sid, position, word])
                 for position, word in enumerate(sentence.split())]
    counts = Counter(word for _, sentence in inputs["sentences"] for word in sentence.split())
    rows += [("count", "default", [word, k]) for word, total in sorted(counts.items())
             for k in range(1, total + 1)]
    return rows
