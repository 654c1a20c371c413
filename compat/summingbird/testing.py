"""A catalogue of jobs, each with a plain-Python oracle, to hold platforms to one result.

Summingbird's ``TestGraphs`` pairs every job shape with a pure Scala function computing
its expected stores; ``StormLaws`` runs both Memory and Storm on the same graph and
compares final stores exactly and sinks as multisets. This is the same harness for
Python: a ``CatalogueJob`` builds its graph from fresh stores, sinks and services
(``JobIO``), computes its expected ``Outcome`` without any platform, and can make random
inputs from a seed. The memory and batch platforms are checked against it here; the
streaming platform (planned onto both engines) can be checked against the very same
catalogue. Job functions are module-level, so workers import them by name.

Only jobs whose final stores and sinks cannot depend on a platform's granularity belong
here (see the reference, section 4.5): summers chained through their *delta*, never
through the previous value, and no sink after a summer.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .either import Left, Right
from .monoids import (
    First,
    HyperLogLog,
    Last,
    Max,
    Monoid,
    Product,
    ProductSemigroup,
    SetUnion,
    Sum,
)
from .platforms.base import Platform
from .producer import Producer, source
from .services import InMemoryService, Service
from .sinks import CollectorSink
from .stores import InMemoryStore, Store

StoreFactory = Callable[[str], Store]


@dataclass
class JobIO:
    """The stores, sinks and services one run of a job writes to and reads from."""

    stores: dict[str, Store] = field(default_factory=dict)
    sinks: dict[str, CollectorSink] = field(default_factory=dict)
    services: dict[str, Service] = field(default_factory=dict)


@dataclass
class Outcome:
    """What a run leaves behind: final store contents and every element each sink got."""

    stores: dict[str, dict[Hashable, Any]]
    sinks: dict[str, list[Any]]


@dataclass(frozen=True)
class CatalogueJob:
    """A job shape, its oracle and its input generator."""

    name: str
    #: store name -> the semigroup it holds (zero values are dropped when comparing).
    semigroups: Mapping[str, Any]
    sink_names: tuple[str, ...]
    build: Callable[[JobIO, dict[str, Any]], Producer]
    expected: Callable[[dict[str, Any]], Outcome]
    sample: Callable[[random.Random, int], dict[str, Any]]
    #: Services the job reads, made from the inputs.
    services: Callable[[dict[str, Any]], dict[str, Service]] = lambda inputs: {}

    def make_io(self, inputs: dict[str, Any], store_factory: StoreFactory | None = None) -> JobIO:
        """Fresh stores (seeded with ``inputs['initial'][name]`` when given) and sinks."""
        factory = store_factory or (lambda name: InMemoryStore())
        io = JobIO(services=self.services(inputs))
        for name in self.semigroups:
            store = factory(name)
            initial = inputs.get("initial", {}).get(name)
            if initial:
                store.put_all(initial)
            io.stores[name] = store
        io.sinks = {name: CollectorSink() for name in self.sink_names}
        return io


def run_job(platform: Platform[Any], job: CatalogueJob, inputs: dict[str, Any],
            store_factory: StoreFactory | None = None) -> Outcome:
    """Build ``job`` on fresh I/O, run it on ``platform``, return what it left behind."""
    io = job.make_io(inputs, store_factory)
    platform.execute(job.build(io, inputs))
    return Outcome({name: store.contents() for name, store in io.stores.items()},
                   {name: list(sink.items) for name, sink in io.sinks.items()})


# -- comparison ---------------------------------------------------------------------------

def same_value(a: Any, b: Any, rel: float = 1e-9) -> bool:
    """Equality that forgives floating-point rounding (sums taken in another order)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            math.isclose(a, b, rel_tol=rel, abs_tol=rel)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_value(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k], rel) for k in a)
    equal: bool = a == b  # the job's values: their own ==
    return equal


def without_zeros(contents: Mapping[Hashable, Any], semigroup: Any) -> dict[Hashable, Any]:
    """Drop keys holding the monoid's zero: zero and absent are the same in a store."""
    if isinstance(semigroup, Monoid):
        return {k: v for k, v in contents.items() if not semigroup.is_zero(v)}
    return dict(contents)


def multiset(items: Iterable[Any]) -> Counter[str]:
    """Sink contents as a multiset (order differs between concurrent platforms)."""
    return Counter(repr(x) for x in items)


def differences(job: CatalogueJob, actual: Outcome, expected: Outcome) -> list[str]:
    """Readable differences between two outcomes (empty when they agree)."""
    problems: list[str] = []
    for name, semigroup in job.semigroups.items():
        got = without_zeros(actual.stores.get(name, {}), semigroup)
        want = without_zeros(expected.stores.get(name, {}), semigroup)
        if not same_value(got, want):
            keys = sorted(set(got) ^ set(want), key=repr)[:5]
            changed = sorted((k for k in set(got) & set(want) if not same_value(got[k], want[k])),
                             key=repr)[:5]
            problems.append(f"store {name!r}: keys only on one side {keys}, values differing "
                            f"{[(k, got[k], want[k]) for k in changed]}")
    for name in job.sink_names:
        got_items = multiset(actual.sinks.get(name, []))
        want_items = multiset(expected.sinks.get(name, []))
        if got_items != want_items:
            problems.append(f"sink {name!r}: extra {list((got_items - want_items).items())[:5]}, "
                            f"missing {list((want_items - got_items).items())[:5]}")
    return problems


# -- plain-Python helpers for the oracles --------------------------------------------------

def sum_by_key(pairs: Iterable[tuple[Hashable, Any]], semigroup: Any,
               initial: Mapping[Hashable, Any] | None = None) -> dict[Hashable, Any]:
    """The final store of ``sum_by_key``, in plain Python (left fold in input order)."""
    totals = dict(initial or {})
    for key, value in pairs:
        totals[key] = semigroup.plus(totals[key], value) if key in totals else value
    return totals


_WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "a", "cat",
          "summingbird", "storm", "heron")


def _lines(rng: random.Random, size: int) -> list[str]:
    return [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 6))) for _ in range(size)]


# -- 1. word count -------------------------------------------------------------------------

def words_of(line: str) -> list[tuple[str, int]]:
    """Tokenize a line into (word, 1) pairs."""
    return [(word, 1) for word in line.split()]


def _word_count_job(io: JobIO, inputs: dict[str, Any]) -> Producer:
    return source(inputs["lines"]).flat_map(words_of).sum_by_key(io.stores["counts"], Sum())


def _word_count_expected(inputs: dict[str, Any]) -> Outcome:
    counts = Counter(w for line in inputs["lines"] for w in line.split())
    return Outcome({"counts": sum_by_key(counts.items(), Sum(),
                                         inputs.get("initial", {}).get("counts"))}, {})


def _word_count_sample(rng: random.Random, size: int) -> dict[str, Any]:
    return {"lines": _lines(rng, size),
            "initial": {"counts": {w: rng.randint(1, 5) for w in rng.sample(_WORDS, 3)}}}


WORD_COUNT = CatalogueJob("word_count", {"counts": Sum()}, (), _word_count_job,
                          _word_count_expected, _word_count_sample)


# -- 2. two chained sum_by_keys (TestGraphs.twoSumByKey) -----------------------------------

def delta_of(previous_and_delta: tuple[Any, Any]) -> Any:
    """The delta a summer merged (never its previous value: that is platform-dependent)."""
    return previous_and_delta[1]


def buckets_of(key: int) -> list[int]:
    """Re-key for the second summer: every key counts toward two buckets."""
    return [key % 3, 10 + key % 4]


def _chained_job(io: JobIO, inputs: dict[str, Any]) -> Producer:
    return (source(inputs["pairs"])
            .sum_by_key(io.stores["per_key"], Sum())
            .map_values(delta_of)
            .flat_map_keys(buckets_of)
            .sum_by_key(io.stores["per_bucket"], Sum()))


def _chained_expected(inputs: dict[str, Any]) -> Outcome:
    pairs = inputs["pairs"]
    return Outcome({"per_key": sum_by_key(pairs, Sum()),
                    "per_bucket": sum_by_key(((b, v) for k, v in pairs for b in buckets_of(k)),
                                             Sum())}, {})


def _chained_sample(rng: random.Random, size: int) -> dict[str, Any]:
    return {"pairs": [(rng.randint(0, 20), rng.randint(-5, 50)) for _ in range(size)]}


CHAINED_SUMS = CatalogueJob("chained_sums", {"per_key": Sum(), "per_bucket": Sum()}, (),
                            _chained_job, _chained_expected, _chained_sample)


# -- 3. left_join against a service --------------------------------------------------------

def country_amount(joined: tuple[str, tuple[int, str | None]]) -> tuple[str, int]:
    """(user, (amount, country or None)) -> (country or "unknown", amount)."""
    _, (amount, country) = joined
    return (country or "unknown", amount)


def _join_job(io: JobIO, inputs: dict[str, Any]) -> Producer:
    return (source(inputs["purchases"])
            .left_join(io.services["countries"])
            .map(country_amount)
            .sum_by_key(io.stores["revenue"], Sum()))


def _join_expected(inputs: dict[str, Any]) -> Outcome:
    countries = inputs["countries"]
    pairs = [(countries.get(user) or "unknown", amount) for user, amount in inputs["purchases"]]
    return Outcome({"revenue": sum_by_key(pairs, Sum())}, {})


def _join_sample(rng: random.Random, size: int) -> dict[str, Any]:
    users = [f"u{i}" for i in range(12)]
    return {"purchases": [(rng.choice(users), rng.randint(1, 100)) for _ in range(size)],
            "countries": {u: rng.choice(("fr", "de", "jp", "br")) for u in users[:8]}}


LEFT_JOIN = CatalogueJob(
    "left_join",
    {"revenue": Sum()},
    (),
    _join_job,
    _join_expected,
    _join_sample,
    services=lambda inputs: {"countries": InMemoryService(inputs["countries"])},
)


# -- 4. merge of two sources ---------------------------------------------------------------

def _merge_job(io: JobIO, inputs: dict[str, Any]) -> Producer:
    words = source(inputs["lines"]).flat_map(words_of)
    counted = source(inputs["counted"])
    return (words + counted).sum_by_key(io.stores["counts"], Sum())


def _merge_expected(inputs: dict[str, Any]) -> Outcome:
    pairs = [p for line in inputs["lines"] for p in words_of(line)] + list(inputs["counted"])
    return Outcome({"counts": sum_by_key(pairs, Sum())}, {})


def _merge_sample(rng: random.Random, size: int) -> dict[str, Any]:
    return {"lines": _lines(rng, size),
            "counted": [(rng.choice(_WORDS), rng.randint(1, 9)) for _ in range(size // 2 + 1)]}


MERGE_TWO_SOURCES = CatalogueJob("merge_two_sources", {"counts": Sum()}, (), _merge_job,
                                 _merge_expected, _merge_sample)


# -- 5. also with a side write --------------------------------------------------------------

def is_long_word(pair: tuple[str, int]) -> bool:
    return len(pair[0]) > 3


def _also_job(io: JobIO, inputs: dict[str, Any]) -> Producer:
    words = source(inputs["lines"]).flat_map(words_of)
    side = words.filter(is_long_word).write(io.sinks["long_words"])
    return side.also(words.sum_by_key(io.stores["counts"], Sum()))


def _also_expected(inputs: dict[str, Any]) -> Outcome:
    pairs = [p for line in inputs["lines"] for p in words_of(line)]
    return Outcome({"counts": sum_by_key(pairs, Sum(), inputs.get("initial", {}).get("counts"))},
                   {"long_words": [p for p in pairs if is_long_word(p)]})


ALSO_SIDE_WRITE = CatalogueJob("also_side_write", {"counts": Sum()}, ("long_words",), _also_job,
                               _also_expected, _word_count_sample)


# -- 6. sketches and sets: distinct users per page (commutative, map-side combined) ---------

HLL = HyperLogLog(bits=8)
DISTINCT = Product(SetUnion(), HLL, Sum())


def page_visit(visit: tuple[str, str]) -> tuple[str, tuple[frozenset[Any], Any, int]]:
    """(user, page) -> (page, (exact user set, user sketch, one view))."""
    user, page = visit
    return (page, (frozenset((user,)), HLL.create(user), 1))


def _distinct_job(io: JobIO, inputs: dict[str, Any]) -> Producer:
    return source(inputs["visits"]).map(page_visit).sum_by_key(io.stores["pages"], DISTINCT)


def _distinct_expected(inputs: dict[str, Any]) -> Outcome:
    pages: dict[str, tuple[set[str], int]] = {}
    for user, page in inputs["visits"]:
        users, views = pages.get(page, (set(), 0))
        pages[page] = (users | {user}, views + 1)
    return Outcome({"pages": {p: (frozenset(u), HLL.create(*sorted(u)), n)
                              for p, (u, n) in pages.items()}}, {})


def _distinct_sample(rng: random.Random, size: int) -> dict[str, Any]:
    return {"visits": [(f"user{rng.randint(0, 30)}", rng.choice(("/", "/a", "/b", "/c")))
                       for _ in range(size)]}


DISTINCT_USERS = CatalogueJob("distinct_users", {"pages": DISTINCT}, (), _distinct_job,
                              _distinct_expected, _distinct_sample)


# -- 7. non-commutative: first and last value per key, plus the max ------------------------

FIRST_LAST_MAX = ProductSemigroup(First(), Last(), Max())


def as_triple(pair: tuple[str, int]) -> tuple[str, tuple[int, int, int]]:
    key, value = pair
    return (key, (value, value, value))


def _first_last_job(io: JobIO, inputs: dict[str, Any]) -> Producer:
    a = source(inputs["left"]).map(as_triple)
    b = source(inputs["right"]).flat_map(words_of).map(as_triple)
    return (a + b).sum_by_key(io.stores["extremes"], FIRST_LAST_MAX)


def _first_last_expected(inputs: dict[str, Any]) -> Outcome:
    # The memory platform's order: the left side of a merge, then the right side.
    pairs = list(inputs["left"]) + [p for line in inputs["right"] for p in words_of(line)]
    return Outcome({"extremes": sum_by_key((as_triple(p) for p in pairs), FIRST_LAST_MAX)}, {})


def _first_last_sample(rng: random.Random, size: int) -> dict[str, Any]:
    return {"left": [(rng.choice(_WORDS), rng.randint(-100, 100)) for _ in range(size)],
            "right": _lines(rng, size // 2)}


FIRST_AND_LAST = CatalogueJob("first_and_last", {"extremes": FIRST_LAST_MAX}, (),
                              _first_last_job, _first_last_expected, _first_last_sample)


# -- 8. lookup and either, map-only into a sink ---------------------------------------------

def parity_word(n: int) -> str | None:
    """A word for even numbers only (option_map drops the odd ones)."""
    return None if n % 2 else f"n{n}"


def _lookup_either_job(io: JobIO, inputs: dict[str, Any]) -> Producer:
    looked_up = source(inputs["numbers"]).lookup(io.services["names"])
    words = source(inputs["numbers"]).option_map(parity_word)
    return looked_up.either(words).write(io.sinks["mixed"])


def _lookup_either_expected(inputs: dict[str, Any]) -> Outcome:
    names = inputs["names"]
    mixed: list[Left[tuple[Any, Any]] | Right[str]] = [
        Left((n, names.get(n))) for n in inputs["numbers"]]
    mixed += [Right(w) for w in map(parity_word, inputs["numbers"]) if w is not None]
    return Outcome({}, {"mixed": mixed})


def _lookup_either_sample(rng: random.Random, size: int) -> dict[str, Any]:
    return {"numbers": [rng.randint(0, 15) for _ in range(size)],
            "names": {n: f"name-{n}" for n in range(0, 16, 3)}}


LOOKUP_EITHER = CatalogueJob("lookup_either", {}, ("mixed",), _lookup_either_job,
                             _lookup_either_expected, _lookup_either_sample,
                             services=lambda inputs: {"names": InMemoryService(inputs["names"])})


#: Every job; the first five are the shapes the issue names.
CATALOGUE: tuple[CatalogueJob, ...] = (WORD_COUNT, CHAINED_SUMS, LEFT_JOIN, MERGE_TWO_SOURCES,
                                       ALSO_SIDE_WRITE, DISTINCT_USERS, FIRST_AND_LAST,
                                       LOOKUP_EITHER)
