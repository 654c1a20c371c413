"""Per-task state keyed by its input (heronpy's stateful bolts on a fields grouping):
its shape is KEYED only when every key a task holds is one the grouping sends it, and
then a parallelism change moves each entry to its key's new owner; anything else keeps
the old rules (a per-task total freezes the parallelism)."""

from __future__ import annotations

import pytest

from engine.common.grouping.key_groups import key_group, owner_index
from engine.statefulstorage.rescale import (
    EMPTY,
    KEYED,
    LISTS,
    OTHER,
    RescaleRefused,
    combine_shapes,
    keyed_by_input,
    owned_by,
    rescale_task_states,
    task_state_shape,
)

GROUPS = 128
WORDS = [f"w{i}" for i in range(40)]


def owner(word: str, parallelism: int) -> int:
    return owner_index(key_group(word, GROUPS), GROUPS, parallelism)


def states_by_owner(counts: dict[str, int], parallelism: int) -> list[dict]:
    out: list[dict] = [{} for _ in range(parallelism)]
    for word, count in counts.items():
        out[owner(word, parallelism)][word] = count
    return out


class KeyedBolt:
    rescale_state_by_key = True


def test_only_a_marked_class_fed_only_by_fields_groupings_moves_by_key():
    assert keyed_by_input(KeyedBolt, ["fields", "fields"])
    assert not keyed_by_input(KeyedBolt, ["fields", "shuffle"])
    assert not keyed_by_input(KeyedBolt, [])
    assert not keyed_by_input(object, ["fields"])


def test_a_task_holding_only_keys_it_receives_is_keyed_and_one_key_more_is_not():
    counts = {w: i for i, w in enumerate(WORDS)}
    states = states_by_owner(counts, 2)
    assert [task_state_shape(s, owned_by(i, 2, GROUPS)) for i, s in enumerate(states)] == \
        [KEYED, KEYED]
    foreign = next(w for w in WORDS if owner(w, 2) == 1)
    assert task_state_shape({**states[0], foreign: 1}, owned_by(0, 2, GROUPS)) == OTHER
    assert task_state_shape({"total": 5}, None) == OTHER  # unmarked: as before
    assert combine_shapes([KEYED, EMPTY]) == KEYED
    assert combine_shapes([KEYED, LISTS]) == OTHER


@pytest.mark.parametrize("old, new", [(2, 4), (4, 2), (3, 1), (1, 5)])
def test_entries_move_to_their_keys_new_owners_and_none_is_lost(old, new):
    counts = {w: i + 1 for i, w in enumerate(WORDS)}
    out = rescale_task_states(KeyedBolt, "count", states_by_owner(counts, old), new,
                              key_groups=GROUPS)
    assert [dict(s) for s in out] == states_by_owner(counts, new)


def test_state_that_is_not_keyed_by_input_falls_back_to_the_old_rules():
    # a per-task list in every task: split by position, as any component's lists are
    states = [{"seen": [1, 2]}, {"seen": [3, 4]}]
    out = rescale_task_states(KeyedBolt, "count", states, 4, key_groups=GROUPS)
    assert sorted(x for s in out for x in s.get("seen", [])) == [1, 2, 3, 4]
    # a per-task total: no rule shares it out
    with pytest.raises(RescaleRefused, match="'count'"):
        rescale_task_states(KeyedBolt, "count", [{"total": 1}, {"total": 2}], 3,
                            key_groups=GROUPS)
