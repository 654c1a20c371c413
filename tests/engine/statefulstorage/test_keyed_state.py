"""Keyed state in checkpoints (engine/statefulstorage/keyed.py): a round trip at the same
parallelism; restores at other parallelisms (2 -> 5 -> 1) that give every key to exactly
one task, the owner of its group; incremental saves that write only what changed, with
compaction bounding what a restore reads; a key of another task's group refused; older
checkpoints a kept one reads from kept by ``dispose``."""

from __future__ import annotations

import random

import pytest

from compat.storm_api.state import KeyedState
from engine.common.grouping.key_groups import groups_of, key_group
from engine.common.serialization import serializer_for_config
from engine.statefulstorage import LocalFileSystemStorage
from engine.statefulstorage.keyed import COMPACT_AFTER, ForeignKeyError, KeyedStateStore

GROUPS = 16


@pytest.fixture
def store(tmp_path):
    return KeyedStateStore(LocalFileSystemStorage(tmp_path / "ckpts"),
                           serializer_for_config({}), "count", GROUPS)


def split(keys_values: dict, parallelism: int) -> list[KeyedState]:
    """What a fields grouping by key group hands each task."""
    parts = [KeyedState() for _ in range(parallelism)]
    for key, value in keys_values.items():
        g = key_group(key, GROUPS)
        index = next(i for i in range(parallelism) if g in groups_of(i, GROUPS, parallelism))
        parts[index][key] = value
    return parts


def test_a_round_trip_at_the_same_parallelism(store):
    data = {f"w{i}": i for i in range(500)} | {("a", 1): [1, 2], 7: "x"}
    parts = split(data, 3)
    for index, part in enumerate(parts):
        store.save("ckpt-1", 10 + index, index, 3, part, {})
    restored = {}
    for index in range(3):
        keyed, chains = store.load("ckpt-1", index, 3)
        assert dict(keyed) == dict(parts[index]) and not keyed.dirty
        assert set(chains) <= set(groups_of(index, GROUPS, 3))
        restored.update(keyed)
    assert restored == data


@pytest.mark.parametrize("path", [(2, 5, 1), (1, 4, 2), (3, 3, 7)])
def test_rescaling_gives_every_key_to_exactly_one_task_the_owner_of_its_group(store, path):
    rng = random.Random(str(path))
    data = {f"k{rng.randrange(10**6)}": rng.randrange(100) for _ in range(2_000)}
    parts = split(data, path[0])
    chains = [{} for _ in parts]
    checkpoint = ""
    for step, parallelism in enumerate(path):
        checkpoint = f"ckpt-{step + 1}"
        for index, part in enumerate(parts):
            chains[index] = store.save(checkpoint, 100 * step + index, index, len(parts), part,
                                       chains[index]).chains
        nxt = path[step + 1] if step + 1 < len(path) else parallelism
        loaded = [store.load(checkpoint, i, nxt) for i in range(nxt)]
        seen: dict = {}
        for i, (keyed, _) in enumerate(loaded):
            for key in keyed:
                assert key not in seen, f"{key} restored by two tasks"
                assert key_group(key, GROUPS) in groups_of(i, GROUPS, nxt)
                seen[key] = keyed[key]
        assert seen == data
        parts = [keyed for keyed, _ in loaded]
        chains = [c for _, c in loaded]
        # some work between checkpoints: new keys, changed ones, deleted ones
        for key in rng.sample(sorted(data), 50):
            part = parts[next(i for i in range(nxt)
                              if key_group(key, GROUPS) in groups_of(i, GROUPS, nxt))]
            if rng.random() < 0.3:
                del part[key]
                del data[key]
            else:
                part[key] = data[key] = rng.randrange(100)


def test_saves_are_incremental_and_compaction_bounds_the_chains(store):
    keyed = KeyedState({f"k{i}": i for i in range(20_000)})
    first = store.save("ckpt-1", 1, 0, 1, keyed, {})
    assert first.keys_written == 20_000
    chains = first.chains
    sizes = []
    for n in range(2, 2 + 2 * COMPACT_AFTER):
        for i in range(0, 200, 1):  # 1% of the keys change
            keyed[f"k{(n * 37 + i * 101) % 20_000}"] = -n
        result = store.save(f"ckpt-{n}", 1, 0, 1, keyed, chains)
        chains = result.chains
        assert max(len(c) for c in chains.values()) <= COMPACT_AFTER
        sizes.append(result.bytes)
    # most saves write about 1% of what the first did; compactions rewrite a group whole
    assert sorted(sizes)[len(sizes) // 2] < first.bytes / 10
    restored, _ = store.load(f"ckpt-{1 + 2 * COMPACT_AFTER}", 0, 1)
    assert dict(restored) == dict(keyed)
    # nothing touched: nothing but the manifest
    quiet = store.save("ckpt-99", 1, 0, 1, keyed, chains)
    assert quiet.groups_written == 0 and quiet.keys_written == 0


def test_a_key_of_another_tasks_group_is_refused_naming_it(store):
    keyed = KeyedState()
    foreign = next(f"k{i}" for i in range(1000)
                   if key_group(f"k{i}", GROUPS) not in groups_of(0, GROUPS, 2))
    keyed[foreign] = 1
    with pytest.raises(ForeignKeyError) as caught:
        store.save("ckpt-1", 5, 0, 2, keyed, {})
    assert repr(foreign) in str(caught.value) and "count task 5" in str(caught.value)


def test_dispose_keeps_the_older_checkpoints_a_kept_one_reads_from(store):
    keyed = KeyedState({f"k{i}": i for i in range(100)})
    chains = store.save("ckpt-1", 1, 0, 1, keyed, {}).chains
    keyed["k1"] = -1
    chains = store.save("ckpt-2", 1, 0, 1, keyed, chains).chains
    keyed["k2"] = -2
    store.save("ckpt-3", 1, 0, 1, keyed, chains)
    store.storage.dispose({"ckpt-3"})
    assert sorted(store.storage.checkpoints()) == ["ckpt-1", "ckpt-2", "ckpt-3"]
    restored, _ = store.load("ckpt-3", 0, 1)
    assert restored["k1"] == -1 and restored["k2"] == -2 and len(restored) == 100


def test_a_million_keys_with_one_percent_changed_write_about_the_changed_keys(tmp_path, capsys):
    """The issue's figure: with 1,000,000 keys of which 1% change between checkpoints,
    a checkpoint writes within a few times the changed keys' size, not the whole state's
    (the bound is generous: compaction may rewrite a group now and then)."""
    store = KeyedStateStore(LocalFileSystemStorage(tmp_path / "ckpts"),
                            serializer_for_config({}), "count", 128)
    keyed = KeyedState((f"word-{i}", i) for i in range(1_000_000))
    full = store.save("ckpt-1", 1, 0, 1, keyed, {})
    rng = random.Random(3)
    changed = [f"word-{rng.randrange(1_000_000)}" for _ in range(10_000)]
    for key in changed:
        keyed[key] = -1
    changed_bytes = len(serializer_for_config({}).dumps([sorted(set(changed)),
                                                        [-1] * len(set(changed)), []]))
    delta = store.save("ckpt-2", 1, 0, 1, keyed, full.chains)
    with capsys.disabled():
        print(f"\n1,000,000 keys: full checkpoint {full.bytes:,} bytes; 1% changed: "
              f"{delta.bytes:,} bytes written ({delta.bytes / changed_bytes:.1f}x the "
              f"changed keys' {changed_bytes:,} bytes, {delta.bytes / full.bytes:.1%} of full)")
    assert delta.keys_written == len(set(changed))
    assert delta.bytes < 4 * changed_bytes + 64 * 1024
    restored, _ = store.load("ckpt-2", 0, 1)
    assert len(restored) == 1_000_000 and all(restored[k] == -1 for k in changed)
