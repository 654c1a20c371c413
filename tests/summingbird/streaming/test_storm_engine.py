"""The streaming platform on the storm engine (one process): same results as the oracles."""

from __future__ import annotations

import random
import re
import sqlite3
from collections import Counter, defaultdict

import pytest

from compat.summingbird import (
    CacheSize,
    CollectorSink,
    FlatMapParallelism,
    FlushFrequency,
    InMemoryStore,
    JobRuntimeError,
    MemoryPlatform,
    Options,
    PlanningError,
    SourceParallelism,
    SQLiteStore,
    SummerParallelism,
    source,
)
from compat.summingbird.monoids import Sum
from compat.summingbird.platforms import StreamingPlatform, run_streaming
from compat.summingbird.testing import (
    CATALOGUE,
    FIRST_AND_LAST,
    WORD_COUNT,
    differences,
    run_job,
    words_of,
)

ONLINE = [job for job in CATALOGUE if job is not FIRST_AND_LAST]
PARALLEL = {"DEFAULT": Options(SourceParallelism(2), SummerParallelism(2),
                               FlatMapParallelism(2), CacheSize(4), FlushFrequency(0.2))}


@pytest.mark.parametrize("job", ONLINE, ids=[job.name for job in ONLINE])
def test_the_catalogue_on_the_storm_engine_matches_the_oracle(job):
    for seed in (1, 2):
        inputs = job.sample(random.Random(seed), 50)
        outcome = run_job(StreamingPlatform(PARALLEL, engine="storm"), job, inputs)
        assert differences(job, outcome, job.expected(inputs)) == []


@pytest.mark.parametrize("job", ONLINE[:5], ids=[job.name for job in ONLINE[:5]])
def test_sqlite_stores_are_merged_in_place(job, tmp_path):
    inputs = job.sample(random.Random(5), 40)
    outcome = run_job(StreamingPlatform(PARALLEL, engine="storm"), job, inputs,
                      store_factory=lambda name: SQLiteStore(tmp_path / "s.db", table=name))
    assert differences(job, outcome, job.expected(inputs)) == []
    with sqlite3.connect(tmp_path / "s.db") as conn:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert tables and not [t for t in tables if t.endswith("__sb_merged")]  # ledger dropped


def test_non_commutative_jobs_are_refused_before_anything_runs():
    inputs = FIRST_AND_LAST.sample(random.Random(1), 10)
    with pytest.raises(PlanningError, match="not commutative"):
        run_job(StreamingPlatform(engine="storm"), FIRST_AND_LAST, inputs)


def test_each_key_is_merged_by_one_summer_task_and_every_input_once(tmp_path):
    lines = [" ".join(random.Random(i).choices("abcdefghij", k=6)) for i in range(80)]
    store = SQLiteStore(tmp_path / "counts.db")
    job = source(lines).flat_map(words_of).sum_by_key(store, Sum()).name("counts")
    result = run_streaming(job, "storm", {"counts": Options(SummerParallelism(3), CacheSize(5))},
                           record_merges=True)
    assert store.contents() == dict(Counter(w for line in lines for w in line.split()))
    (merges,) = result.merges.values()
    assert len(merges) == sum(len(line.split()) for line in lines)
    tasks_of = defaultdict(set)
    for _, _, key, task in merges:
        tasks_of[key].add(task)
    assert all(len(tasks) == 1 for tasks in tasks_of.values())
    assert len({t for tasks in tasks_of.values() for t in tasks}) > 1  # the keys are spread


def keyed(n: int) -> tuple[int, int]:
    return (n % 4, n)


def test_a_stream_merged_with_itself_counts_twice_as_on_the_memory_platform():
    def job(store):
        numbers = source(range(30)).map(keyed)
        return (numbers + numbers).sum_by_key(store, Sum())

    memory, streaming = InMemoryStore(), InMemoryStore()
    MemoryPlatform().execute(job(memory))
    run_streaming(job(streaming), "storm", {"DEFAULT": FlatMapParallelism(2)})
    assert streaming.contents() == memory.contents() == {
        k: 2 * sum(n for n in range(30) if n % 4 == k) for k in range(4)}


def test_caches_that_never_fill_are_flushed_by_time():
    store = InMemoryStore()
    job = source(["a b a", "c"]).flat_map(words_of).sum_by_key(store, Sum()).name("counts")
    result = run_streaming(job, "storm", {"counts": Options(CacheSize(1000), FlushFrequency(0.3))})
    assert store.contents() == {"a": 2, "b": 1, "c": 1}
    assert result.reason == "finished"


def test_the_tail_outputs_and_sinks_match_the_memory_platform_as_multisets():
    def job(sink, store):
        return (source(["x y", "y z", "x"]).flat_map(words_of).write(sink)
                .sum_by_key(store, Sum()))

    memory_sink, streaming_sink = CollectorSink(), CollectorSink()
    memory = MemoryPlatform().execute(job(memory_sink, InMemoryStore()))
    streaming = run_streaming(job(streaming_sink, InMemoryStore()), "storm",
                              {"DEFAULT": FlatMapParallelism(2)})
    assert Counter(streaming_sink.items) == Counter(memory_sink.items)
    assert streaming_sink.items == memory_sink.items  # once each, in lineage order
    # One (key, (previous, delta)) per input, as on the memory platform. With every delta 1
    # (as in Summingbird's StormLaws) that multiset does not depend on arrival order.
    assert sorted(streaming.outputs, key=repr) == sorted(memory.outputs, key=repr)


def test_at_most_once_runs_give_the_same_stores_when_nothing_fails():
    inputs = WORD_COUNT.sample(random.Random(9), 30)
    outcome = run_job(StreamingPlatform(PARALLEL, engine="storm", reliability="at_most_once"),
                      WORD_COUNT, inputs)
    assert differences(WORD_COUNT, outcome, WORD_COUNT.expected(inputs)) == []


def shout(line: str) -> list[tuple[str, int]]:
    if "boom" in line:
        raise ValueError(f"cannot shout {line!r}")
    return words_of(line)


def test_an_error_in_user_code_ends_the_run_naming_the_component_and_the_node(tmp_path):
    job = source(["fine", "boom here"]).flat_map(shout).sum_by_key(InMemoryStore(), Sum())
    with pytest.raises(JobRuntimeError) as info:
        run_streaming(job, "storm", time_limit=60, working_dir=tmp_path / "run")
    text = str(info.value)
    assert re.search(r"failed on the storm engine: component 'flat_map-1' task \d+: ", text)
    assert f"logs in {tmp_path / 'run'}" in text
    assert "ValueError: cannot shout 'boom here' (in Summingbird node 'flat_map' (node " in text
    assert "test_storm_engine.py:" in text


def test_an_unknown_engine_is_refused():
    with pytest.raises(PlanningError, match="engine must be one of storm, heron"):
        StreamingPlatform(engine="flink")


@pytest.mark.parametrize("engine", ["storm", pytest.param("heron", marks=pytest.mark.slow)])
def test_the_word_count_example_runs_on_the_streaming_platform(engine):
    import json

    from click.testing import CliRunner

    from examples.summingbird_wordcount.__main__ import SAMPLE
    from examples.summingbird_wordcount.__main__ import main as wordcount

    result = CliRunner().invoke(wordcount, ["--platform", "streaming", "--engine", engine,
                                            "--parallelism", "2", "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    # The counts are the last line (log lines of the engine may come before it).
    print(repr(result.output[-3000:]))
    assert json.loads(result.output.strip().splitlines()[-1]) == dict(
        Counter(w for line in lines for w in re.findall(r"[a-z']+", line.lower())))


def test_a_deployed_topology_calls_its_sinks_where_the_write_runs(tmp_path):
    from compat.summingbird import JsonLinesSink
    from compat.summingbird.platforms.streaming import plan_topology
    from engine.common.plan.compiler import compile_topology
    from engine.storm import LocalCluster

    sink = JsonLinesSink(tmp_path / "words.jsonl")
    store = SQLiteStore(tmp_path / "counts.db")
    job = (source(["a b", "b c"]).flat_map(words_of).write(sink)
           .sum_by_key(store, Sum()).name("counts"))
    topology = plan_topology(job, {"DEFAULT": FlatMapParallelism(2)}, name="deployed")
    cluster = LocalCluster(compile_topology(topology, name="deployed"), log_dir=tmp_path / "logs")
    assert cluster.run(time_limit=60).reason == "finished"
    assert Counter(map(tuple, sink.read())) == Counter(
        [("a", 1), ("b", 1), ("b", 1), ("c", 1)])
    assert store.contents() == {"a": 1, "b": 2, "c": 1}
