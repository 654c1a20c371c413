"""The memory platform: Summingbird Memory's semantics, element by element."""

from __future__ import annotations

import pytest

from compat.summingbird import (
    CollectorSink,
    InMemoryService,
    InMemoryStore,
    JobRuntimeError,
    Left,
    MemoryPlatform,
    PlanningError,
    Right,
    source,
)
from compat.summingbird.monoids import First, Last, Sum

memory = MemoryPlatform()


def test_sum_by_key_emits_previous_value_and_delta_per_element_in_order():
    store = InMemoryStore({"a": 10})
    out = memory.execute(source([("a", 1), ("b", 2), ("a", 3), ("b", 4)]).sum_by_key(store, Sum()))
    assert out.outputs == [("a", (10, 1)), ("b", (None, 2)), ("a", (11, 3)), ("b", (2, 4))]
    assert store.contents() == {"a": 14, "b": 6}


def test_summers_chain_on_previous_and_delta():
    first, second = InMemoryStore(), InMemoryStore()
    job = (source([("x", 1), ("y", 1), ("x", 1)])
           .sum_by_key(first, Sum())
           .map_values(lambda prev_delta: (prev_delta[0] or 0) + prev_delta[1])  # running total
           .map_keys(lambda _: "all")
           .sum_by_key(second, Last()))
    memory.execute(job)
    assert first.contents() == {"x": 2, "y": 1}
    assert second.contents() == {"all": 2}  # the total of x after its second element


def test_non_commutative_semigroups_fold_in_input_order():
    firsts, lasts = InMemoryStore(), InMemoryStore()
    pairs = [("k", i) for i in range(5)]
    memory.execute(source(pairs).sum_by_key(firsts, First()))
    memory.execute(source(pairs).sum_by_key(lasts, Last()))
    assert (firsts.get("k"), lasts.get("k")) == (0, 4)


def test_merge_is_left_then_right_and_self_merge_doubles():
    sink = CollectorSink()
    a, b = source([1, 2]), source([3])
    memory.execute((a + b + a).write(sink))
    assert sink.items == [1, 2, 3, 1, 2]


def test_maps_filters_and_keyed_operations():
    sink = CollectorSink()
    job = (source(["b a", "c", ""])
           .flat_map(str.split)
           .filter(lambda w: w != "c")
           .option_map(lambda w: None if w == "z" else (w, len(w)))
           .map_keys(str.upper)
           .flat_map_keys(lambda k: [k, k + "!"])
           .map_values(lambda v: v * 10)
           .flat_map_values(lambda v: [v, v + 1])
           .filter_values(lambda v: v % 2 == 0)
           .filter_keys(lambda k: not k.startswith("A"))
           .write(sink))
    memory.execute(job)
    assert sink.items == [("B", 10), ("B!", 10)]


def test_keys_values_swap():
    sink = CollectorSink()
    pairs = source([("k", 1), ("j", 2)])
    memory.execute((pairs.keys() + pairs.values().map(str) + pairs.swap().map(repr)).write(sink))
    assert sink.items == ["k", "j", "1", "2", "(1, 'k')", "(2, 'j')"]


def test_left_join_lookup_and_either():
    service = InMemoryService({"a": "A"})
    joined, looked_up, mixed = CollectorSink(), CollectorSink(), CollectorSink()
    memory.execute(source([("a", 1), ("b", 2)]).left_join(service).write(joined))
    memory.execute(source(["a", "z"]).lookup(service).write(looked_up))
    either = source([1]).either(source(["x"])).write(mixed)
    memory.execute(either)
    assert joined.items == [("a", (1, "A")), ("b", (2, None))]
    assert looked_up.items == [("a", "A"), ("z", None)]
    assert mixed.items == [Left(1), Right("x")]
    lefts, rights = CollectorSink(), CollectorSink()
    memory.execute(source(mixed.items).lefts().write(lefts).also(source(mixed.items).rights().write(rights)))
    assert (lefts.items, rights.items) == ([1], ["x"])


def test_also_plans_both_sides_and_outputs_the_result():
    side, store = CollectorSink(), InMemoryStore()
    words = source(["a", "b", "a"])
    job = words.write(side).also(words.map(lambda w: (w, 1)).sum_by_key(store, Sum()))
    result = memory.execute(job)
    assert side.items == ["a", "b", "a"]
    assert store.contents() == {"a": 2, "b": 1}
    assert [k for k, _ in result.outputs] == ["a", "b", "a"]


def test_shared_subgraph_is_evaluated_once():
    calls = []

    def noting(x):
        calls.append(x)
        return (x, 1)

    shared = source([1, 2]).map(noting)
    memory.execute(shared.sum_by_key(InMemoryStore(), Sum()).also(shared.write(CollectorSink())))
    assert calls == [1, 2]


def test_a_plan_runs_again_with_the_same_source():
    store = InMemoryStore()
    plan = memory.plan(source([("a", 1)]).sum_by_key(store, Sum()))
    memory.run(plan)
    memory.run(plan)
    assert store.get("a") == 2


def test_only_tails_can_be_planned():
    with pytest.raises(PlanningError, match=r"only a tail.*'map'"):
        memory.plan(source([1]).map(str))
    with pytest.raises(PlanningError, match="got list"):
        memory.plan([1])


# -- contracts only the data can break --------------------------------------------------------

def test_non_pair_element_at_a_keyed_node_names_the_node():
    job = source(["a b"]).map(lambda s: s.split()).sum_by_key(InMemoryStore(), Sum())
    with pytest.raises(
        JobRuntimeError,
        match=r"'sum_by_key' \(node \d+, .*test_memory_platform.py:\d+\) "
        r"needs \(key, value\) pairs, got \['a', 'b'\] \(list\).*map\(tuple\)",
    ):
        memory.execute(job)


def test_map_returning_none_and_unhashable_keys_are_errors():
    with pytest.raises(JobRuntimeError, match="returned None.*option_map or filter"):
        memory.execute(source([1]).map(lambda x: None).write(CollectorSink()))
    with pytest.raises(JobRuntimeError, match=r"key \['k'\] \(list\) is not hashable"):
        memory.execute(source([(["k"], 1)]).sum_by_key(InMemoryStore(), Sum()))
    with pytest.raises(JobRuntimeError, match="must return an iterable, got int"):
        memory.execute(source([1]).flat_map(lambda x: x).write(CollectorSink()))


def test_user_exceptions_keep_their_type_and_name_the_node():
    with pytest.raises(ZeroDivisionError) as info:
        memory.execute(source([0]).map(lambda x: 1 / x).write(CollectorSink()))
    assert any("Summingbird node 'map'" in note for note in info.value.__notes__)
