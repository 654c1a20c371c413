"""Each grouping's distribution, as Storm defines it."""

import collections
import random
import subprocess
import sys

import pytest

from engine.common.grouping import GroupingError, build_grouping, fields_key_hash


def route(kind, tasks, values_list, **kw):
    g = build_grouping(kind, tasks, **kw)
    out = collections.Counter()
    for values in values_list:
        for t in g.choose(values, kw.get("direct_task")):
            out[t] += 1
    return g, out


def test_all_grouping_sends_a_copy_to_every_task():
    g = build_grouping("all", [7, 5, 6])
    assert sorted(g.choose(["x"])) == [5, 6, 7]
    _, counts = route("all", [5, 6, 7], [["a"], ["b"]])
    assert counts == {5: 2, 6: 2, 7: 2}


def test_global_grouping_reaches_only_lowest_task():
    _, counts = route("global", [9, 4, 6], [[i] for i in range(100)])
    assert counts == {4: 100}


def test_fields_with_no_fields_is_storms_global_grouping():
    _, counts = route("fields", [3, 2], [[i] for i in range(10)], stream_fields=["x"])
    assert counts == {2: 10}


def test_fields_grouping_sends_each_key_to_exactly_one_task():
    g = build_grouping("fields", [1, 2, 3], stream_fields=["word", "n"], grouping_fields=["word"])
    seen = collections.defaultdict(set)
    for i in range(3000):
        word = f"w{i % 50}"
        seen[word].update(g.choose([word, i]))
    assert all(len(tasks) == 1 for tasks in seen.values())
    # and the keys spread over all tasks
    assert set().union(*seen.values()) == {1, 2, 3}


def test_fields_grouping_ignores_other_fields_and_task_listing_order():
    a = build_grouping("fields", [1, 2, 3], stream_fields=["k", "v"], grouping_fields=["k"])
    b = build_grouping("fields", [3, 1, 2], stream_fields=["k", "v"], grouping_fields=["k"])
    for i in range(200):
        assert a.choose([f"k{i}", 1]) == b.choose([f"k{i}", 999])


def test_fields_hash_is_stable_across_processes():
    code = ("from engine.common.grouping import fields_key_hash;"
            "print([fields_key_hash(['dog', 1], [0]), fields_key_hash(['a', 'b'], [0, 1])])")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout
            for seed in (1, 2)}
    assert len(outs) == 1
    assert outs.pop().strip() == str([fields_key_hash(["dog", 1], [0]),
                                      fields_key_hash(["a", "b"], [0, 1])])


def test_fields_grouping_on_unknown_field_names_it():
    with pytest.raises(GroupingError, match="nope"):
        build_grouping("fields", [1], stream_fields=["word"], grouping_fields=["nope"],
                       consumer="counter")


@pytest.mark.parametrize("kind", ["shuffle", "none", "local_or_shuffle"])
def test_shuffle_kinds_spread_evenly_round_robin(kind):
    _, counts = route(kind, [1, 2, 3], [[i] for i in range(300)], rng=random.Random(1))
    assert counts == {1: 100, 2: 100, 3: 100}


def test_shuffle_starts_at_a_random_task():
    starts = {build_grouping("shuffle", [1, 2, 3, 4], rng=random.Random(s)).choose([0])[0]
              for s in range(40)}
    assert len(starts) > 1


def test_local_or_shuffle_prefers_local_tasks():
    _, counts = route("local_or_shuffle", [1, 2, 3, 4], [[i] for i in range(40)],
                      local_tasks={2, 4})
    assert set(counts) == {2, 4}


def test_direct_grouping_obeys_direct_task():
    g = build_grouping("direct", [4, 5])
    assert g.choose(["x"], 5) == (5,)
    assert g.choose(["x"], 99) == ()  # not a task of this consumer: nothing delivered
    with pytest.raises(GroupingError, match="direct_task"):
        g.choose(["x"], None)
