"""The online planner: Summingbird's split rules, groupings, options, refusals, determinism."""

from __future__ import annotations

import pytest

from compat.summingbird import (
    CacheSize,
    CollectorSink,
    FlatMapParallelism,
    FlushFrequency,
    InMemoryService,
    InMemoryStore,
    Options,
    PlanningError,
    SourceParallelism,
    SQLiteStore,
    SummerParallelism,
    source,
)
from compat.summingbird.monoids import First, Sum
from compat.summingbird.platforms.streaming import (
    AllowNonCommutative,
    plan_streaming,
    plan_topology,
)
from compat.summingbird.platforms.streaming.planner import FLAT_MAP, SPOUT, SUMMER
from compat.summingbird.testing import buckets_of, delta_of, words_of
from engine.common.plan.compiler import compile_topology


def is_even(n: int) -> bool:
    return n % 2 == 0


def keyed(n: int) -> tuple[int, int]:
    return (n % 3, n)


def word_count(store):
    return (source(["a b", "b c"]).flat_map(words_of).sum_by_key(store, Sum())
            .name("word-counts"))


def shape(plan):
    """``{component: (role, [upstream components])}``."""
    return {n.name: (n.role, [e.source for e in n.inputs]) for n in plan.nodes}


def test_word_count_plans_a_spout_a_flat_map_bolt_and_a_summer_fields_grouped_on_the_key(tmp_path):
    store = SQLiteStore(tmp_path / "counts.db")
    options = {"word-counts": Options(SummerParallelism(3), FlatMapParallelism(2))}
    topology = plan_topology(word_count(store), options, name="wordcount")
    plan = compile_topology(topology, name="wordcount").plan

    assert [(c.name, c.kind, c.parallelism) for c in plan.components.values()] == [
        ("source-0", "spout", 1),
        ("flat_map-1", "bolt", 2),
        ("sum_by_key-2-word-counts", "bolt", 3),
    ]
    flat_map, summer = plan.components["flat_map-1"], plan.components["sum_by_key-2-word-counts"]
    assert [(i.source, i.grouping, i.fields) for i in flat_map.inputs] == [
        ("source-0", "shuffle", ())]
    assert [(i.source, i.grouping, i.fields) for i in summer.inputs] == [
        ("flat_map-1", "fields", ("key",))]
    for component in plan.components.values():
        assert tuple(component.outputs["default"].fields) == ("key", "payload")
        assert component.shell is None  # native only: no streamparse_run entry point
    assert topology.config == {}


def test_option_maps_run_in_the_spout_and_a_flat_map_bolt_is_kept_before_the_summer():
    store = InMemoryStore()
    job = (source(range(10)).filter(is_even).map(keyed).map_values(abs)
           .sum_by_key(store, Sum()))
    plan = plan_streaming(job, allow_in_memory_stores=True)
    assert shape(plan) == {
        "source-0": (SPOUT, []),
        "map_values-1": (FLAT_MAP, ["source-0"]),
        "sum_by_key-2": (SUMMER, ["map_values-1"]),
    }
    spout = plan.node("source-0")
    assert [m.split("'")[1] for m in spout.members] == ["source", "filter", "map"]


def test_option_maps_alone_before_a_summer_still_get_their_own_bolt():
    job = source(range(10)).map(keyed).sum_by_key(InMemoryStore(), Sum())
    plan = plan_streaming(job, allow_in_memory_stores=True)
    assert shape(plan) == {"source-0": (SPOUT, []), "map-1": (FLAT_MAP, ["source-0"]),
                           "sum_by_key-2": (SUMMER, ["map-1"])}


def test_a_source_of_pairs_feeds_its_summer_directly():
    job = source([(1, 2)]).sum_by_key(InMemoryStore(), Sum())
    plan = plan_streaming(job, allow_in_memory_stores=True)
    assert shape(plan) == {"source-0": (SPOUT, []), "sum_by_key-1": (SUMMER, ["source-0"])}
    assert plan.node("source-0").keyed_output


def test_nothing_after_a_summer_shares_its_node():
    job = (source([(1, 2)]).sum_by_key(InMemoryStore(), Sum()).map_values(delta_of)
           .flat_map_keys(buckets_of).sum_by_key(InMemoryStore(), Sum()))
    plan = plan_streaming(job, allow_in_memory_stores=True)
    assert shape(plan) == {
        "source-0": (SPOUT, []),
        "sum_by_key-1": (SUMMER, ["source-0"]),
        "flat_map_keys-2": (FLAT_MAP, ["sum_by_key-1"]),
        "sum_by_key-3": (SUMMER, ["flat_map_keys-2"]),
    }
    first = plan.node("sum_by_key-1")
    assert first.emits and first.keyed_output is False  # its consumer is a flat-map bolt
    assert plan.node("flat_map_keys-2").keyed_output


def test_merge_inputs_start_their_own_nodes_and_a_fork_is_never_pulled_into_a_consumer():
    words = source(["a b"]).flat_map(words_of)
    side = words.filter(is_long).write(CollectorSink())
    counted = source([("a", 2)])
    job = side.also((words + counted).sum_by_key(InMemoryStore(), Sum()))
    plan = plan_streaming(job, allow_in_memory_stores=True)
    assert shape(plan) == {
        "source-0": (SPOUT, []),
        "flat_map-1": (FLAT_MAP, ["source-0"]),
        "write-2": (FLAT_MAP, ["flat_map-1"]),
        "source-3": (SPOUT, []),
        "sum_by_key-4": (SUMMER, ["flat_map-1", "source-3"]),
    }
    assert plan.node("flat_map-1").consumers == ("write-2", "sum_by_key-4")
    assert plan.tail.name == "sum_by_key-4"


def is_long(pair: tuple[str, int]) -> bool:
    return len(pair[0]) > 3


def test_a_stream_merged_with_itself_is_processed_once_per_side_with_distinct_lineages():
    numbers = source([1, 2]).map(keyed)
    job = (numbers + numbers).sum_by_key(InMemoryStore(), Sum())
    plan = plan_streaming(job, allow_in_memory_stores=True)
    summer = plan.node("sum_by_key-2")
    (edge,) = summer.inputs
    assert len(edge.codes) == 2 and edge.codes[0] != edge.codes[1]


def test_left_joins_and_writes_run_in_bolts_never_in_spouts():
    sink = CollectorSink()
    job = source([("u", 1)]).left_join(InMemoryService({"u": "fr"})).write(sink)
    plan = plan_streaming(job)
    assert shape(plan) == {"source-0": (SPOUT, []), "write-1": (FLAT_MAP, ["source-0"])}
    assert [type(op).__name__ for op in plan.node("write-1").ops] == ["JoinOp", "WriteOp"]


def test_options_by_name_set_parallelism_and_the_summer_cache():
    job = (source(["a"]).name("lines").flat_map(words_of).name("words")
           .sum_by_key(InMemoryStore(), Sum()).name("counts"))
    options = {"lines": SourceParallelism(2), "words": FlatMapParallelism(3),
               "counts": Options(SummerParallelism(4), CacheSize(100), FlushFrequency(0.5))}
    plan = plan_streaming(job, options, allow_in_memory_stores=True)
    assert [(n.name, n.parallelism) for n in plan.nodes] == [
        ("source-0-lines", 2), ("flat_map-1-words", 3), ("sum_by_key-2-counts", 4)]
    summer = plan.node("sum_by_key-2-counts")
    assert (summer.summer.cache_size, summer.summer.flush_seconds) == (100, 0.5)
    assert summer.config == {"topology.tick.tuple.freq.secs": 0.5}
    assert plan.node("flat_map-1-words").config == {}


def test_non_commutative_summers_are_refused_online_unless_the_job_opts_in():
    def job():
        return source([("k", 1)]).sum_by_key(InMemoryStore(), First()).name("firsts")

    with pytest.raises(PlanningError, match=r"not commutative.*'firsts': AllowNonCommutative"):
        plan_streaming(job(), allow_in_memory_stores=True)
    plan = plan_streaming(job(), {"firsts": AllowNonCommutative()}, allow_in_memory_stores=True)
    assert plan.node("sum_by_key-1-firsts").role == SUMMER


def test_a_deployed_topology_refuses_in_memory_stores_naming_the_summer():
    with pytest.raises(PlanningError, match=r"'sum_by_key' \(node \d+, .*test_planner.py:\d+\) "
                                            r"merges into an InMemoryStore"):
        plan_topology(word_count(InMemoryStore()))


def test_a_flush_period_longer_than_the_message_timeout_is_refused():
    job = word_count(InMemoryStore())
    options = {"word-counts": Options(CacheSize(10), FlushFrequency(40))}
    with pytest.raises(PlanningError, match=r"FlushFrequency\(40\) must be shorter than "
                                            r"topology.message.timeout.secs \(30"):
        plan_streaming(job, options, allow_in_memory_stores=True)


def test_planning_is_deterministic_so_every_process_compiles_the_same_plan(tmp_path):
    store = SQLiteStore(tmp_path / "c.db")
    options = {"word-counts": Options(SummerParallelism(2), CacheSize(5), FlushFrequency(0.2))}
    first = compile_topology(plan_topology(word_count(store), options, name="wc"), name="wc").plan
    # Build unrelated graphs in between: producer ids move on, names must not.
    source([1]).map(keyed).sum_by_key(InMemoryStore(), Sum())
    again = compile_topology(plan_topology(word_count(store), options, name="wc"), name="wc").plan
    assert first.to_bytes() == again.to_bytes()
