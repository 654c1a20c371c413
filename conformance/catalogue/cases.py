"""The built-in catalogue: one declarative entry per case.

Projects are under ``projects/`` (``core``: the groupings and topology shapes;
``wordcount``: seeded word count), fixtures under ``fixtures/``, expected rows from
:mod:`conformance.catalogue.expected`. Cases that share a topology and input (the seven
grouping cases) share one run per engine; each compares only its own streams.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from conformance.catalogue import expected as exp
from conformance.catalogue.case import (
    FIXTURES,
    PROJECTS,
    Case,
    CaseError,
    ExpectedFn,
    Kill,
)
from conformance.model import Comparison, SemanticClass

EXACT = SemanticClass.EXACT
AT_LEAST_ONCE = SemanticClass.AT_LEAST_ONCE

CORE = PROJECTS / "core"
WORDCOUNT = PROJECTS / "wordcount"
HERONPY = PROJECTS / "heronpy"
NUMBERS = {"numbers": FIXTURES / "numbers.jsonl"}


def _rows(*streams: tuple[str, str], ignore: tuple[int, ...] = ()) -> Comparison:
    return Comparison(kind="rows", streams=tuple(streams), ignore_columns=ignore)


def _grouping(name: str, sink: str, fn: ExpectedFn, what: str,
              ignore: tuple[int, ...] = ()) -> Case:
    return Case(
        name=f"grouping_{name}", description=what, project=CORE, topology="groupings",
        fixtures=NUMBERS, comparison=_rows((sink, "default"), ignore=ignore),
        expected=fn, tags=("grouping", name) + (("direct",) if name == "direct" else ()))


CATALOGUE: tuple[Case, ...] = (
    _grouping("shuffle", "shuffle_sink", exp.shuffle,
              "shuffle: every tuple reaches exactly one of 3 tasks (task index ignored)",
              ignore=(0,)),
    _grouping("fields", "fields_sink", exp.fields,
              "fields on key: every tuple reaches task hash(key) % 3"),
    _grouping("all", "all_sink", exp.all_, "all: every tuple reaches both tasks"),
    _grouping("global", "global_sink", exp.global_,
              "global: every tuple reaches the lowest task"),
    _grouping("none", "none_sink", exp.none,
              "none behaves as shuffle (task index ignored)", ignore=(0,)),
    _grouping("direct", "direct_sink", exp.direct,
              "direct: the spout names the task (n % 2) and only it gets the tuple"),
    _grouping("local_or_shuffle", "local_sink", exp.local_or_shuffle,
              "local_or_shuffle on one machine behaves as shuffle (task index ignored)",
              ignore=(0,)),
    Case(name="one_spout_two_bolts", project=CORE, topology="fan_out", fixtures=NUMBERS,
         description="one spout feeding two bolts (shuffle and fields): every tuple "
                     "reaches both",
         comparison=_rows(("numbers", "default"), ("doubler", "default"),
                          ("squarer", "default")),
         expected=exp.fan_out, tags=("shape",)),
    Case(name="several_spouts", project=CORE, topology="several_spouts",
         fixtures={"letters": FIXTURES / "letters.jsonl", **NUMBERS},
         description="two spouts (one with two tasks, splitting its fixture) into one bolt",
         comparison=_rows(("merge", "default")), expected=exp.several_spouts,
         tags=("shape",)),
    Case(name="bolt_emits_twice", project=CORE, topology="twice", fixtures=NUMBERS,
         description="a bolt emitting every tuple twice: duplicates are part of the "
                     "expected multiset",
         comparison=_rows(("twice", "default")), expected=exp.twice, tags=("shape",)),
    Case(name="named_streams", project=CORE, topology="named_streams", fixtures=NUMBERS,
         description="a spout emitting on named streams even/odd; a bolt subscribing to "
                     "both and emitting on small, large and default",
         comparison=_rows(("numbers", "even"), ("numbers", "odd"), ("router", "small"),
                          ("router", "large"), ("router", "default")),
         expected=exp.named_streams, tags=("streams",)),
    Case(name="diamond", project=CORE, topology="diamond", fixtures=NUMBERS,
         description="a diamond: two bolts in parallel joined again on n",
         comparison=_rows(("left", "default"), ("right", "default"), ("join", "default")),
         expected=exp.diamond, tags=("shape",)),
    Case(name="empty_input", project=CORE, topology="fan_out",
         fixtures={"numbers": FIXTURES / "empty.jsonl"},
         description="an empty fixture: the run still ends by itself, with no output",
         comparison=_rows(("numbers", "default"), ("doubler", "default"),
                          ("squarer", "default")),
         expected=exp.empty, tags=("shape",)),
    Case(name="at_most_once_idless", project=CORE, topology="at_most_once",
         fixtures=NUMBERS,
         description="acking on, spout emits without ids: a bolt's fails replay nothing",
         comparison=_rows(("numbers", "default"), ("flaky", "default")),
         expected=exp.at_most_once, tags=("at-most-once",)),
    Case(name="reliable_spout_failing_bolt", project=CORE, topology="reliable",
         fixtures=NUMBERS,
         description="ReliableSpout; a bolt fails the first delivery of every fifth tuple, "
                     "which the spout replays once",
         comparison=_rows(("numbers", "default"), ("picky", "default")),
         expected=exp.reliable, allowed_under_failure=AT_LEAST_ONCE,
         inject=Kill("picky", 20), tags=("acking",)),
    Case(name="replay_after_kill", project=CORE, topology="replay_after_kill",
         fixtures=NUMBERS,
         description="at-least-once through two bolts; the tail bolt is killed at its "
                     "20th tuple: the lost root times out and is replayed, so upstream "
                     "rows repeat and none is missing",
         comparison=_rows(("numbers", "default"), ("relay", "default"), ("tail", "default")),
         expected=exp.replay_after_kill, allowed_under_failure=AT_LEAST_ONCE,
         kill=Kill("tail", 20), tags=("acking", "failure-injection")),
    Case(name="batching_bolt_ticks", project=CORE, topology="batching", fixtures=NUMBERS,
         description="BatchingBolt flushed by 0.2 s ticks, grouped by key: batch totals "
                     "summed per key",
         comparison=Comparison(kind="per_key", streams=(("totals", "default"),),
                               key_columns=(0,), value_column=1, reduce="sum"),
         expected=exp.batching, tags=("ticks",)),
    Case(name="multilang_bolt", project=CORE, topology="multilang",
         fixtures={"words": FIXTURES / "words.jsonl"},
         description="a multi-lang bolt (subprocess, Storm's JSON protocol) between "
                     "native components",
         comparison=_rows(("shout", "default"), ("exclaim", "default")),
         expected=exp.multilang, tags=("multilang",)),
    Case(name="word_count", project=WORDCOUNT, topology="word_count",
         fixtures={"sentences": FIXTURES / "sentences.jsonl"},
         description="seeded word count (60 sentences): every running count of every word",
         comparison=_rows(("count", "default")), expected=exp.word_count,
         tags=("aggregate",)),
    Case(name="word_count_replay_after_kill", project=WORDCOUNT,
         topology="word_count_reliable",
         fixtures={"sentences": FIXTURES / "sentences.jsonl"},
         description="at-least-once word count; a split task is killed at its 15th "
                     "sentence: replays emit extra running counts, the final count per "
                     "word stays exact",
         comparison=Comparison(kind="per_key", streams=(("count", "default"),),
                               key_columns=(0,), value_column=1, reduce="max"),
         expected=exp.word_count, allowed_under_failure=EXACT, kill=Kill("split", 15),
         tags=("acking", "failure-injection", "aggregate")),
    Case(name="word_count_from_kafka", project=WORDCOUNT, topology="word_count_kafka",
         fixtures={"sentences": FIXTURES / "sentences.jsonl"}, kafka_spouts=("sentences",),
         description="the seeded word count reading its sentences from a 3-partition Kafka "
                     "topic (KafkaSpout, two tasks sharing the partitions, to the topic's "
                     "end): every running count of every word",
         comparison=_rows(("count", "default")), expected=exp.word_count,
         tags=("aggregate", "kafka")),
    Case(name="stateful_word_count_with_failures", project=WORDCOUNT,
         topology="word_count_stateful",
         fixtures={"sentences": FIXTURES / "sentences.jsonl"},
         description="effectively-once word count (counts and the spout's position are "
                     "checkpointed state); a count task is killed at its 40th word and the "
                     "whole topology rolls back to its last checkpoint: replays emit running "
                     "counts again, the final count per word (the counting state) is exact "
                     "and identical on both engines",
         comparison=Comparison(kind="per_key", streams=(("count", "default"),),
                               key_columns=(0,), value_column=1, reduce="max"),
         expected=exp.word_count, allowed_under_failure=EXACT, kill=Kill("count", 40),
         tags=("failure-injection", "aggregate", "stateful")),
    Case(name="bolt_raising_now_and_then", project=WORDCOUNT, topology="split_raising",
         fixtures={"sentences": FIXTURES / "sentences.jsonl"},
         description="a bolt that raises now and then: a stateless splitter raises at every "
                     "7th sentence a task executes (after emitting its first word), at-least-"
                     "once with ReliableSpout; each raise restarts it at once and replays "
                     "the sentence; words compared after de-duplicating by message id and "
                     "position",
         comparison=Comparison(kind="per_key", streams=(("split", "default"),),
                               key_columns=(0, 1), value_column=2, reduce="max"),
         expected=exp.split_words, tags=("acking", "restarts")),
)


#: heronpy topologies, each run beside its ``heron-migrate --heronpy`` twin on every engine
#: (``heron-conformance run --heronpy``). Apart from CATALOGUE because a twin case has three
#: pairs (storm vs heron, and each engine vs its twin) where a catalogue case has one.
HERONPY_CASES: tuple[Case, ...] = (
    Case(name="heronpy_word_count", project=HERONPY, topology="heronpy_word_count",
         fixtures={"sentences": FIXTURES / "sentences.jsonl"},
         description="Heron's Python API (heronpy, a TopologyBuilder main) at least once: "
                     "word count with a splitter that fails the first delivery of every "
                     "7th sentence and a spout that reports each ack and fail and replays; "
                     "run beside its heron-migrate --heronpy twin (streamparse) on each "
                     "engine: every row of every stream, acks and fails included",
         comparison=_rows(("sentences", "default"), ("sentences", "acks"),
                          ("split", "default"), ("count", "default")),
         expected=exp.heronpy_word_count, tags=("acking", "heronpy"), twin="heronpy"),
)


def select_cases(pattern: str | None = None,
                 cases: Iterable[Case] = CATALOGUE) -> list[Case]:
    """The cases whose name matches ``pattern`` (a regex, searched), in catalogue order."""
    cases = list(cases)
    if not pattern:
        return cases
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise CaseError(f"--cases {pattern!r} is not a regular expression: {exc}") from None
    chosen = [c for c in cases if regex.search(c.name)]
    if not chosen:
        raise CaseError(f"--cases {pattern!r} matches no case; cases: "
                        + ", ".join(c.name for c in cases))
    return chosen


def case_named(name: str, cases: Iterable[Case] = CATALOGUE) -> Case:
    for case in cases:
        if case.name == name:
            return case
    raise CaseError(f"no case named {name!r}")


__all__ = ["CATALOGUE", "HERONPY_CASES", "case_named", "select_cases"]
