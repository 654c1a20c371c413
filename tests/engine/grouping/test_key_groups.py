"""Key groups (engine/common/grouping/key_groups.py): for random parallelisms and key-group
counts every group has exactly one owner, the owners' ranges tile the groups, the fields
grouping's hash and the key hash agree, and a rescale moves only groups whose owner
changed, each whole, to its new owner."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.common.grouping import fields_key_hash
from engine.common.grouping.key_groups import (
    check_parallelism,
    groups_of,
    key_group,
    key_hash,
    moves,
    owner_index,
    routing_table,
)
from engine.config.key_groups import KeyGroupError, key_groups

parallelisms = st.integers(min_value=1, max_value=64)
group_counts = st.integers(min_value=1, max_value=512)
keys = st.one_of(st.text(max_size=12), st.integers(min_value=-2**40, max_value=2**40),
                 st.tuples(st.text(max_size=6), st.integers(min_value=0, max_value=999)))


@settings(max_examples=300, deadline=None)
@given(groups=group_counts, parallelism=parallelisms)
def test_every_group_has_exactly_one_owner_and_owners_tile_the_groups(groups, parallelism):
    if parallelism > groups:
        parallelism = groups
    owned = [list(groups_of(i, groups, parallelism)) for i in range(parallelism)]
    flat = [g for r in owned for g in r]
    assert flat == list(range(groups))  # contiguous, in order, each once
    for i, r in enumerate(owned):
        assert r, "a task that owns no group"
        assert all(owner_index(g, groups, parallelism) == i for g in r)
    sizes = [len(r) for r in owned]
    assert max(sizes) - min(sizes) <= 1  # balanced


@settings(max_examples=300, deadline=None)
@given(groups=group_counts, old=parallelisms, new=parallelisms,
       some=st.lists(keys, max_size=40))
def test_a_rescale_moves_only_groups_whose_owner_changed_and_keys_follow_their_group(
        groups, old, new, some):
    old, new = min(old, groups), min(new, groups)
    moved = {g: (a, b) for g, a, b in moves(old, new, groups)}
    for g in range(groups):
        a, b = owner_index(g, groups, old), owner_index(g, groups, new)
        assert (g in moved) == (a != b)
        if g in moved:
            assert moved[g] == (a, b)
    for key in some:
        g = key_group(key, groups)
        # the task that received the key before owns its group before, and after
        assert owner_index(g, groups, old) in range(old)
        assert g in groups_of(owner_index(g, groups, new), groups, new)
    if old == new:
        assert moved == {}


@settings(max_examples=200, deadline=None)
@given(key=keys, tasks=st.lists(st.integers(min_value=1, max_value=10_000), min_size=1,
                                max_size=20, unique=True), groups=group_counts)
def test_the_routing_table_sends_a_key_to_the_owner_of_its_group(key, tasks, groups):
    tasks = tasks[:groups]
    table = routing_table(tasks, groups)
    assert len(table) == groups and set(table) == set(tasks)
    values = list(key) if isinstance(key, tuple) else [key]
    indices = list(range(len(values)))
    h = fields_key_hash(values, indices)
    assert h == key_hash(key)  # the grouping's hash of the fields is the key's hash
    owner = sorted(tasks)[owner_index(h % groups, groups, len(tasks))]
    assert table[h % groups] == owner


def test_settings_and_parallelism_caps_name_the_key():
    assert key_groups({}) == 128
    assert key_groups({"topology.stateful.key.groups": 16}) == 16
    for bad in (0, -3, 1.5, "8", True, 70_000):
        try:
            key_groups({"topology.stateful.key.groups": bad})
        except KeyGroupError as exc:
            assert "topology.stateful.key.groups" in str(exc)
        else:
            raise AssertionError(bad)
    check_parallelism("count", 16, 16)
    try:
        check_parallelism("count", 17, 16)
    except KeyGroupError as exc:
        assert "'count'" in str(exc) and "at most 16 tasks" in str(exc)
    else:
        raise AssertionError("17 tasks over 16 groups accepted")


def test_the_stream_manager_routes_a_fields_grouping_by_key_group_under_effectively_once():
    """build_routes with key groups: every row of a batch goes to the owner of its key's
    group, on the split path and the tracked path alike, one sub-batch per task."""
    from engine.common.codec import selected_module
    from engine.common.plan import compile_topology
    from engine.messages import tuple_pb2
    from engine.stmgr.routes import build_routes
    split_batch, split_indices = (selected_module("routing").split_batch,
                                  selected_module("routing").split_indices)
    from compat.storm_api import Bolt, Grouping, Spout, Topology

    class Words(Spout):
        outputs = ["word"]

        def next_tuple(self):
            pass

    class Count(Bolt):
        def process(self, tup):
            pass

    class T(Topology):
        words = Words.spec()
        count = Count.spec(inputs={words: Grouping.fields("word")}, par=3)

    plan = compile_topology(T, name="t").plan
    tasks = {"words": [1], "count": [2, 3, 4]}
    routes = build_routes(plan, tasks, {1, 2, 3, 4}, key_groups=16)[("words", "default")]
    table = routes[0].key_groups
    assert table == routing_table([2, 3, 4], 16)
    words = [f"w{i}" for i in range(200)]
    batch = tuple_pb2.TupleBatch(src_task_id=1, values=[w.encode() for w in words],
                                 key_hashes=[key_hash(w) for w in words])
    batch.stream.component_name, batch.stream.id = "words", "default"
    payload = batch.SerializeToString()
    got = {task: [v.decode() for v in part] for task, part in split_batch(batch, payload, routes)}
    assert sorted(got) == [2, 3, 4]  # one part per task
    for task, part in got.items():
        assert all(table[key_hash(w) % 16] == task for w in part)
    assert sorted(w for part in got.values() for w in part) == sorted(words)
    indices = dict(split_indices(batch, routes))
    assert {t: [words[i] for i in rows] for t, rows in indices.items()} == got
