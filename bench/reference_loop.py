"""The plain-Python reference loop: what a component API of the word count's shape costs
per tuple when it is nothing but Python method calls and objects.

The issue's goal for our API path (spout emit plus bolt delivery, with Storm's record
types) is stated against this loop, measured in the same run: our per-tuple overhead at
most half this loop's plain-object overhead. The words are the word-count benchmark's
own (``bench/projects/wordcount_bench``: ``wordbench.spout.task_rng`` over
``wordbench.vocabulary``, spout task 0's sequence) and so is the row, ``[word, 0]`` with
the fields ``word`` and ``ts``. Three modes:

``fused``
    pick the word and count it in one loop: no API at all (the bare loop);
``plain``
    ``spout.next_tuple()`` -> ``collector.emit(values)`` -> a slotted ``Tuple`` object ->
    the hash of the key picks one of two bolt tasks (fields grouping) ->
    ``bolt.execute(tup)`` -> count: method calls and plain objects, no serialization;
``named``
    the same with Storm's record types, as pystorm builds them: a ``Tuple`` namedtuple
    holding a values namedtuple.

The API overhead per word of a mode is its time per word minus the fused loop's. Each
round times the three modes one after the other; a mode's figure is its best round (or
the median, ``--statistic median``), on the process's CPU clock, so time the process
spent waiting for a core on a busy machine is not counted. Compare ratios from one run,
not absolute figures from different runs: the machine's speed varies by half from
minute to minute.

    python bench/reference_loop.py [--words 1000000] [--rounds 3] [--statistic best]
                                   [--seed 7] [--json]

``bench/instance_paths.py`` runs it beside our own API path (its "API overhead"
section); :func:`measure` returns the figures, :func:`time_round` times one round.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import namedtuple
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: the modes, in the order each round times them
MODES = ("fused", "plain", "named")
#: the API modes: their overhead is measured against the fused loop
API_MODES = ("plain", "named")
STATISTICS = ("best", "median")
#: the spout and bolt names and the stream the reference tuples carry (the benchmark's)
SPOUT = "word_spout"
STREAM = "default"
#: two counting tasks behind a fields grouping, as in the benchmark's topologies
BOLT_TASKS = 2


# -- the benchmark's word picker -----------------------------------------------------------

@dataclass(frozen=True)
class Picker:
    """The benchmark spout's words: its vocabulary and a factory of spout task 0's
    seeded ``choice`` (a fresh one per run, so every mode sees the same words)."""

    vocabulary: tuple[str, ...]
    seed: int
    task_rng: Callable[[int, int], Any]

    def choice(self) -> Callable[[Sequence[str]], str]:
        return self.task_rng(self.seed, 0).choice


def picker_of(loaded: Any, seed: int) -> Picker:
    """The picker of a loaded word-count topology (``bench.wordcount_runs.load``): its
    spout's own module, so the words are exactly the ones the engines count."""
    from bench.wordcount_figures import SPOUT as BENCH_SPOUT

    module = sys.modules[loaded.compiled.component_classes[BENCH_SPOUT].__module__]
    size = int(loaded.plan.config["bench.vocabulary"])
    return Picker(module.vocabulary(size), seed, module.task_rng)


def benchmark_picker(seed: int, words: int = 1) -> Picker:
    """Load Heron's word count (the benchmark's headline topology) and take its picker."""
    from bench.wordcount_figures import TOPOLOGY_HERON, bench_options
    from bench.wordcount_runs import load

    return picker_of(load(bench_options(words, seed), 2, topology=TOPOLOGY_HERON), seed)


# -- the three modes ---------------------------------------------------------------------

def run_fused(words: int, picker: Picker) -> dict[str, int]:
    """Pick and count in one loop: no API."""
    choice, vocabulary = picker.choice(), picker.vocabulary
    counts: dict[str, int] = {}
    get = counts.get
    for _ in range(words):
        word = choice(vocabulary)
        counts[word] = get(word, 0) + 1
    return counts


class PlainTuple:
    """A tuple as a plain slotted object."""

    __slots__ = ("id", "component", "stream", "task", "values")

    def __init__(self, id: Any, component: str, stream: str, task: int, values: Any) -> None:
        self.id = id
        self.component = component
        self.stream = stream
        self.task = task
        self.values = values


#: Storm's record types, as pystorm builds them: a Tuple namedtuple whose values are a
#: namedtuple of the stream's fields
NamedTuple = namedtuple("Tuple", ["id", "component", "stream", "task", "values"])
WordValues = namedtuple("Word_SpoutDefaultTuple", ["word", "ts"])


class CountingBolt:
    """One counting task: a dict of counts."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def execute(self, tup: Any) -> None:
        word = tup.values[0]
        self.counts[word] = self.counts.get(word, 0) + 1


class GroupingCollector:
    """The spout's collector: builds the tuple and delivers it, by a direct call, to the
    bolt task the hash of its first field (fields grouping) picks."""

    def __init__(self, bolts: Sequence[CountingBolt], named: bool) -> None:
        self.bolts = list(bolts)
        self.tasks = len(self.bolts)
        self.named = named

    def emit(self, values: list, stream: str = STREAM) -> None:
        if self.named:
            tup = NamedTuple(None, SPOUT, stream, 1, WordValues._make(values))
        else:
            tup = PlainTuple(None, SPOUT, stream, 1, values)
        self.bolts[hash(values[0]) % self.tasks].execute(tup)


class PickingSpout:
    """The spout: one word per ``next_tuple``, emitted as the benchmark's row."""

    def __init__(self, picker: Picker, collector: GroupingCollector) -> None:
        self.vocabulary = picker.vocabulary
        self.choice = picker.choice()
        self.collector = collector

    def next_tuple(self) -> None:
        self.collector.emit([self.choice(self.vocabulary), 0])


def run_api(words: int, picker: Picker, named: bool) -> dict[str, int]:
    """``words`` calls of the spout's ``next_tuple`` through the collector into the
    counting tasks; their counts, merged."""
    bolts = [CountingBolt() for _ in range(BOLT_TASKS)]
    next_tuple = PickingSpout(picker, GroupingCollector(bolts, named)).next_tuple
    for _ in range(words):
        next_tuple()
    merged: dict[str, int] = {}
    for bolt in bolts:
        merged.update(bolt.counts)  # a fields grouping: no word is in two tasks
    return merged


def run_mode(mode: str, words: int, picker: Picker) -> dict[str, int]:
    if mode == "fused":
        return run_fused(words, picker)
    if mode in API_MODES:
        return run_api(words, picker, named=mode == "named")
    raise ValueError(f"unknown mode {mode!r}; the modes are {', '.join(MODES)}")


# -- timing ------------------------------------------------------------------------------

@dataclass
class ReferenceFigures:
    """Each mode's time per round, and the figures taken from them."""

    words: int
    seed: int
    statistic: str = "best"
    #: mode -> CPU seconds of each round
    seconds: dict[str, list[float]] = field(default_factory=dict)
    #: every mode counted exactly what the fused loop counted, in every round
    counts_match: bool = True
    distinct_words: int = 0

    @property
    def rounds(self) -> int:
        return min((len(v) for v in self.seconds.values()), default=0)

    def seconds_of(self, mode: str) -> float:
        """The mode's figure: its best round, or the median round."""
        rounds = self.seconds[mode]
        return min(rounds) if self.statistic == "best" else statistics.median(rounds)

    def us_per_word(self) -> dict[str, float]:
        return {mode: self.seconds_of(mode) / self.words * 1e6 for mode in self.seconds}

    def overhead_us(self) -> dict[str, float]:
        """API overhead per word: ``plain`` and ``named`` minus ``fused``."""
        per_word = self.us_per_word()
        return {mode: per_word[mode] - per_word["fused"] for mode in API_MODES
                if mode in per_word and "fused" in per_word}

    def as_json(self) -> dict[str, Any]:
        return {"words": self.words, "seed": self.seed, "rounds": self.rounds,
                "statistic": self.statistic, "clock": "CPU (time.process_time)",
                "us_per_word": {k: round(v, 4) for k, v in self.us_per_word().items()},
                "overhead_us_per_word": {k: round(v, 4) for k, v in self.overhead_us().items()},
                "seconds_per_round": {k: [round(s, 5) for s in v]
                                      for k, v in self.seconds.items()},
                "counts_match": self.counts_match, "distinct_words": self.distinct_words}


def time_round(figures: ReferenceFigures, picker: Picker,
               clock: Callable[[], float] = time.process_time,
               modes: Sequence[str] = MODES) -> dict[str, int]:
    """Time each mode once (in ``modes``' order) and add the times to ``figures``; the
    counts of every mode are checked against the first's (the fused loop's), which are
    returned."""
    reference: dict[str, int] | None = None
    for mode in modes:
        began = clock()
        counts = run_mode(mode, figures.words, picker)
        took = clock() - began
        figures.seconds.setdefault(mode, []).append(took)
        if reference is None:
            reference = counts
            figures.distinct_words = len(counts)
        elif counts != reference:
            figures.counts_match = False
        del counts
    return reference or {}


def measure(words: int = 1_000_000, rounds: int = 3, seed: int = 7,
            statistic: str = "best", picker: Picker | None = None,
            clock: Callable[[], float] = time.process_time) -> ReferenceFigures:
    """Run every mode ``rounds`` times (fused, plain, named, then again) on the
    benchmark's words and return the figures. ``picker`` defaults to the benchmark's
    own (loading its topology)."""
    if words < 1 or rounds < 1:
        raise ValueError(f"words and rounds must be at least 1; got {words} and {rounds}")
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}; got {statistic!r}")
    picker = picker if picker is not None else benchmark_picker(seed, words)
    figures = ReferenceFigures(words, seed, statistic)
    for _ in range(rounds):
        time_round(figures, picker, clock)
    return figures


# -- command line ------------------------------------------------------------------------

def report_lines(figures: ReferenceFigures) -> list[str]:
    per_word, overhead = figures.us_per_word(), figures.overhead_us()
    label = (f"best of {figures.rounds}" if figures.statistic == "best"
             else f"median of {figures.rounds}")
    lines = [f"plain-Python reference loop: {figures.words:,} words of the word-count "
             f"benchmark, CPU µs per word ({label} rounds)"]
    for mode in MODES:
        if mode not in per_word:
            continue
        rate = 1e6 / per_word[mode] if per_word[mode] > 0 else 0.0
        extra = f"  API overhead {overhead[mode]:.3f} µs/word" if mode in overhead else ""
        lines.append(f"  {mode:6s} {rate:>12,.0f} words/s  {per_word[mode]:.3f} µs/word{extra}")
    lines.append(f"✓ counts: every mode counted what the fused loop counted "
                 f"({figures.distinct_words:,} distinct words)" if figures.counts_match
                 else "✗ counts: a mode counted differently from the fused loop")
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/reference_loop.py",
        description="CPU per word of a plain-Python spout -> collector -> bolt loop of the "
                    "word count's shape (plain objects, and Storm's record types), against "
                    "the fused pick-and-count loop")
    parser.add_argument("--words", type=int, default=1_000_000,
                        help="words per mode and round (default 1,000,000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--statistic", choices=STATISTICS, default="best",
                        help="each mode's figure: its best round (default) or the median")
    parser.add_argument("--seed", type=int, default=7, help="the word sequence's seed")
    parser.add_argument("--json", action="store_true", help="figures as JSON on stdout")
    args = parser.parse_args(argv)
    if args.words < 1 or args.rounds < 1:
        parser.error("--words and --rounds must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """0 when every mode counted what the fused loop counted, else 1."""
    args = parse_args(argv)
    figures = measure(args.words, args.rounds, args.seed, args.statistic)
    if args.json:
        print(json.dumps(figures.as_json(), indent=2))
    else:
        print("\n".join(report_lines(figures)))
    return 0 if figures.counts_match else 1


if __name__ == "__main__":
    sys.exit(main())
