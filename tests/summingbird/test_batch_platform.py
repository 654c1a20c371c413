"""The batch platform on PySpark gives the memory platform's final stores and sinks.

One SparkSession serves the whole test run (the ``spark`` fixture); each test's jobs are
small, so the Spark part of this file stays well under a minute on two cores.
"""

from __future__ import annotations

import random
import textwrap

import pytest

from compat.summingbird import (
    CollectorSink,
    InMemoryStore,
    JobRuntimeError,
    JsonLinesSource,
    MemoryPlatform,
    Options,
    SourceParallelism,
    SQLiteStore,
    SummerParallelism,
    source,
)
from compat.summingbird.monoids import Monoid, Sum
from compat.summingbird.platforms.batch import BatchPlatform
from compat.summingbird.testing import (
    CATALOGUE,
    differences,
    multiset,
    run_job,
    same_value,
)

pytestmark = [pytest.mark.timeout(180)]


@pytest.fixture
def batch(spark):
    return BatchPlatform(session=spark)


@pytest.mark.parametrize("job", CATALOGUE, ids=[job.name for job in CATALOGUE])
def test_batch_equals_memory_and_the_oracle(job, batch):
    inputs = job.sample(random.Random(11), 150)
    on_batch = run_job(batch, job, inputs)
    on_memory = run_job(MemoryPlatform(), job, inputs)
    assert differences(job, on_batch, on_memory) == []
    assert differences(job, on_batch, job.expected(inputs)) == []
    for name in job.sink_names:
        assert multiset(on_batch.sinks[name]) == multiset(on_memory.sinks[name])


@pytest.mark.parametrize("job", CATALOGUE[:2], ids=[job.name for job in CATALOGUE[:2]])
def test_sqlite_stores_on_batch(job, batch, tmp_path):
    inputs = job.sample(random.Random(5), 120)
    outcome = run_job(batch, job, inputs,
                      store_factory=lambda name: SQLiteStore(tmp_path / "s.db", table=name))
    assert differences(job, outcome, job.expected(inputs)) == []


def test_batch_summer_emits_previous_and_the_batch_delta_once_per_key(batch):
    store = InMemoryStore({"a": 100})
    job = source([("a", 1), ("b", 2), ("a", 3)]).sum_by_key(store, Sum())
    result = batch.execute(job)
    assert sorted(result.outputs) == [("a", (100, 4)), ("b", (None, 2))]
    assert store.contents() == {"a": 104, "b": 2}


def test_sinks_receive_the_memory_platform_order(batch):
    def build(sink):
        numbers = source(list(range(40)))
        evens = numbers.filter(lambda n: n % 2 == 0).flat_map(lambda n: [n, -n])
        return (evens + numbers.map(str)).write(sink)

    on_memory, on_batch = CollectorSink(), CollectorSink()
    MemoryPlatform().execute(build(on_memory))
    batch.execute(build(on_batch))
    assert on_batch.items == on_memory.items


def test_options_choose_partitions_by_name(batch):
    job = (source([(i % 7, i) for i in range(100)]).map_values(abs)
           .sum_by_key(InMemoryStore(), Sum()).name("counts"))
    platform = BatchPlatform({"counts": Options(SummerParallelism(3)),
                              "DEFAULT": SourceParallelism(2)}, session=batch.session)
    plan = platform.plan(job)
    summer = job.parents[0]
    src = plan.graph.nodes[0]
    assert plan.partitions == {src.id: 2, summer.id: 3}
    result = platform.run(plan)
    assert result.partitions[summer.id] == 3
    assert min(result.outputs) == (0, (None, sum(range(0, 100, 7))))


def test_json_lines_source_on_batch(batch, tmp_path):
    path = tmp_path / "events.jsonl"
    lines = ['["a", 1]', "", '["b", 2]', '["a", 5]'] * 30
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stores = {name: InMemoryStore() for name in ("memory", "batch")}
    for name, platform in (("memory", MemoryPlatform()), ("batch", batch)):
        platform.execute(source(JsonLinesSource(path)).sum_by_key(stores[name], Sum()))
    assert stores["batch"].contents() == stores["memory"].contents() == {"a": 180, "b": 60}


def test_left_join_against_a_sqlite_service_runs_in_the_executors(batch, tmp_path):
    users = SQLiteStore(tmp_path / "users.db", table="users")
    users.put_all({f"u{i}": "fr" if i % 2 else "jp" for i in range(10)})
    revenue = {name: InMemoryStore() for name in ("memory", "batch")}
    purchases = [(f"u{i % 13}", i) for i in range(200)]
    for name, platform in (("memory", MemoryPlatform()), ("batch", batch)):
        job = (source(purchases).left_join(users.as_service())
               .map(lambda p: (p[1][1] or "unknown", p[1][0]))
               .sum_by_key(revenue[name], Sum()))
        platform.execute(job)
    assert revenue["batch"].contents() == revenue["memory"].contents()
    assert set(revenue["batch"].contents()) == {"fr", "jp", "unknown"}


def test_errors_in_executors_name_the_node(batch):
    with pytest.raises(
        JobRuntimeError,
        match=r"'sum_by_key' \(node \d+, .*\).*needs \(key, value\) "
        r"pairs, got \['a', 'b'\] \(list\)",
    ):
        batch.execute(source(["a b"]).map(str.split).sum_by_key(InMemoryStore(), Sum()))
    with pytest.raises(JobRuntimeError, match=r"ZeroDivisionError.*Summingbird node 'map'"):
        batch.execute(source([0, 1]).map(lambda x: 1 / x).write(CollectorSink()))
    with pytest.raises(JobRuntimeError, match="does not exist"):
        batch.execute(source(JsonLinesSource("/nonexistent/x.jsonl")).write(CollectorSink()))


def pair_with_length(word):
    """A job function defined in a test module (shipped by value to the workers)."""
    return (len(word), word)


def test_job_code_workers_cannot_import_is_shipped_by_value(batch, tmp_path, monkeypatch):
    package = tmp_path / "outside_job_dir"
    package.mkdir()
    (package / "sb_outside_job.py").write_text(textwrap.dedent("""
        from dataclasses import dataclass

        from compat.summingbird.monoids import Monoid


        @dataclass(frozen=True)
        class Span:
            low: int
            high: int


        def widen(a, b):
            return Span(min(a.low, b.low), max(a.high, b.high))


        SPANS = Monoid.of(Span(10**9, -10**9), widen, commutative=True)


        def span_of(word):
            return (word[0], Span(len(word), len(word)))
    """), encoding="utf-8")
    # Only the driver can import this module: the executors' Python workers start from the
    # repository with their own sys.path.
    monkeypatch.syspath_prepend(str(package))
    import sb_outside_job as job_module
    from pyspark import cloudpickle as spark_cloudpickle

    before = set(spark_cloudpickle.list_registry_pickle_by_value())
    stores = {name: InMemoryStore() for name in ("memory", "batch")}
    words = ["apple", "avocado", "banana", "blueberry", "cherry", "kiwi"] * 5
    for name, platform in (("memory", MemoryPlatform()), ("batch", batch)):
        lengths = source(words).map(pair_with_length).values()
        platform.execute(lengths.map(job_module.span_of).sum_by_key(stores[name], job_module.SPANS))
    assert stores["batch"].contents() == stores["memory"].contents()
    assert stores["batch"].get("b") == job_module.Span(6, 9)
    assert set(spark_cloudpickle.list_registry_pickle_by_value()) == before


def test_non_commutative_monoid_sums_in_memory_order_on_batch(batch):
    concat = Monoid.of("", lambda a, b: a + b)  # not commutative
    stores = {name: InMemoryStore() for name in ("memory", "batch")}
    letters = [(i % 3, chr(97 + i % 26)) for i in range(90)]
    for name, platform in (("memory", MemoryPlatform()), ("batch", batch)):
        platform.execute(
            (source(letters[:45]) + source(letters[45:])).sum_by_key(stores[name], concat)
        )
    assert same_value(stores["batch"].contents(), stores["memory"].contents())
