"""The floor under any engine of this design, for ``bench/instance_paths.py --floor``:
each step every word of word count needs (pick the word, serialize the row, hash its
key, decode it, build the ``Tuple``, count), timed alone with no engine code around it,
against the CPU per word heron may spend to reach half the bare loop's rate."""

from __future__ import annotations

import os
import sys
import time
from collections import namedtuple
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.wordcount_figures import SPOUT
from compat.storm_api.tuple import Tuple
from engine.common.codec import tuple_codec
from engine.common.serialization import MsgpackSerializer


@dataclass
class FloorFigures:
    """The per-word work word count needs in any engine built the way the design says
    (values serialized at the emitter, a key hash for fields grouping, decoded and made
    a ``Tuple`` at the bolt, the result row serialized and kept), each step timed alone
    in a tight loop with no engine code around it."""

    words: int
    #: the bare loop (pick a word, count it): words per second, the goal's yardstick
    bare_loop_rate: float
    cpus: int
    #: step -> CPU µs per word
    steps: dict[str, float] = field(default_factory=dict)

    @property
    def total_us(self) -> float:
        return sum(self.steps.values())

    @property
    def budget_us(self) -> float:
        """CPU µs per word, over every process, that heron at half the bare loop's rate
        may spend on this many cores."""
        return self.cpus / (0.5 * self.bare_loop_rate) * 1e6

    def as_json(self) -> dict[str, Any]:
        return {"words": self.words, "bare_loop_words_per_second": round(self.bare_loop_rate),
                "cpus": self.cpus, "us_per_word": {k: round(v, 3) for k, v in self.steps.items()},
                "total_us_per_word": round(self.total_us, 3),
                "budget_us_per_word_for_half_the_bare_loop": round(self.budget_us, 3)}


def measure_floor(loaded: Any, words: int, seed: int) -> FloorFigures:
    """Time each step word count cannot do without, with the engine's own libraries
    (its serializer, CRC-32 of the packed key, the ``Tuple`` type), on the benchmark's
    words: what is left of a word's cost if every line of engine code cost nothing."""
    spout_module = sys.modules[loaded.compiled.component_classes[SPOUT].__module__]
    vocabulary = spout_module.vocabulary(int(loaded.plan.config["bench.vocabulary"]))
    choice = spout_module.task_rng(seed, 0).choice
    clock = time.process_time
    get_bare: dict[str, int] = {}
    bare_get = get_bare.get
    began = clock()
    for _ in range(words):  # the bare loop, as bench/wordcount.py runs it (on the CPU
        word = choice(vocabulary)  # clock here, as the steps below are)
        get_bare[word] = bare_get(word, 0) + 1
    bare_rate = words / max(clock() - began, 1e-9)

    serializer = MsgpackSerializer()
    # the tuple path's own functions, as the engine calls them (compiled or pure)
    dumps, loads_many = serializer.dumps, serializer.loads_many
    key_hash, make_tuples = tuple_codec.key_hash, tuple_codec.make_tuples
    values_type = namedtuple("Word_SpoutDefaultTuple", ["word", "ts"])
    counts: dict[str, int] = {}
    get = counts.get
    latest: dict[str, int] = {}
    names = ["pick the word (the spout's own choice)", "serialize the row",
             "hash the grouping key (CRC-32 of the packed word)",
             "decode the rows (a batch at a time)",
             "build the Tuple (string id, namedtuple values)", "count the word",
             "serialize the (word, count) row", "keep the latest count (the leaf stream's result)"]
    seconds = dict.fromkeys(names, 0.0)
    done = 0
    # a batch at a time, as the engine moves words: nothing piles up for the garbage
    # collector to walk, which would charge the later steps for the earlier ones' objects
    while done < words:
        n = min(1024, words - done)
        t0 = clock()
        picked = [choice(vocabulary) for _ in range(n)]
        t1 = clock()
        rows = [dumps([word, 0]) for word in picked]
        t2 = clock()
        hashes = [key_hash(word) for word in picked]
        t3 = clock()
        decoded = loads_many(rows)
        t4 = clock()
        tuples = make_tuples(done, decoded, SPOUT, "default", 1, values_type, Tuple)[0]
        t5 = clock()
        counted = []
        for tup in tuples:
            word = tup.values.word
            c = get(word, 0) + 1
            counts[word] = c
            counted.append((word, c))
        t6 = clock()
        results = [dumps([word, c]) for word, c in counted]
        t7 = clock()
        for word, c in counted:
            latest[word] = c
        t8 = clock()
        for name, took in zip(names, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5,
                                      t7 - t6, t8 - t7)):
            seconds[name] += took
        done += n
        del hashes, results
    steps = {name: secs / words * 1e6 for name, secs in seconds.items()}
    return FloorFigures(words, bare_rate, os.cpu_count() or 1, steps)


def render_floor(console: Console, floor: FloorFigures) -> None:
    table = Table(title=f"the floor: work every word needs, no engine code ({floor.words:,} words)")
    table.add_column("step")
    table.add_column("CPU µs per word", justify="right")
    for name, us in floor.steps.items():
        table.add_row(name, f"{us:.2f}")
    table.add_row("all", f"{floor.total_us:.2f}", style="bold")
    console.print(table)
    console.print(f"heron at 0.5x the bare loop ({floor.bare_loop_rate:,.0f} words/s here) may "
                  f"spend {floor.budget_us:.2f} µs of CPU per word over all its processes on "
                  f"{floor.cpus} cores; these steps alone take {floor.total_us:.2f} µs "
                  f"({floor.total_us / floor.budget_us:.0%} of it), before any code of the "
                  "engine's or of the component API runs")
