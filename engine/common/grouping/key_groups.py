"""Key groups: how keyed state and the fields grouping agree on who owns a key, for any
parallelism (Flink's key groups; Heron has none and drops state on rescale).

A topology has a fixed number of key groups ``G`` (``topology.stateful.key.groups``,
read by engine/config/key_groups.py). A
key's group is its fields-grouping hash modulo ``G``, and a component with ``n`` tasks
gives task index ``i`` the contiguous range of groups ``g`` with ``g * n // G == i``.
Under EFFECTIVELY_ONCE a fields grouping routes a tuple to the owner of its key's
group, so the task that receives key ``k`` is the task whose keyed state holds ``k``;
when ``n`` changes, each group moves whole to its new owner, and a group whose owner
index is unchanged does not move. ``G`` caps a stateful component's parallelism.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.common.codec import tuple_codec
from engine.config.key_groups import KeyGroupError
from engine.config.keys import KEY_GROUPS_KEY

#: The fields grouping's hash of a key: the grouping field's value, or the tuple of the
#: grouping fields' values (msgpack packs a tuple as the list the grouping hashes); the
#: compiled tuple path's when built (a checkpoint hashes every key it writes whole)
key_hash = tuple_codec.key_hash


def key_group(key: Any, groups: int) -> int:
    return key_hash(key) % groups


def owner_index(group: int, groups: int, parallelism: int) -> int:
    """The task index (0-based, in sorted task-id order) owning ``group``."""
    return group * parallelism // groups


def groups_of(index: int, groups: int, parallelism: int) -> range:
    """The key groups task index ``index`` of ``parallelism`` owns."""
    return range(-(-index * groups // parallelism), -(-(index + 1) * groups // parallelism))


def routing_table(tasks: Sequence[int], groups: int) -> tuple[int, ...]:
    """The owning task id of every key group: ``table[hash % groups]`` routes a tuple."""
    ordered = sorted(tasks)
    return tuple(ordered[owner_index(g, groups, len(ordered))] for g in range(groups))


def moves(old_parallelism: int, new_parallelism: int,
          groups: int) -> list[tuple[int, int, int]]:
    """``(group, old index, new index)`` of every group whose owner index changes."""
    return [(g, owner_index(g, groups, old_parallelism), owner_index(g, groups, new_parallelism))
            for g in range(groups)
            if owner_index(g, groups, old_parallelism) != owner_index(g, groups, new_parallelism)]


def check_parallelism(component: str, parallelism: int, groups: int) -> None:
    """A stateful component cannot have more tasks than key groups (a task would own
    none, and its keyed state could never hold anything)."""
    if parallelism > groups:
        raise KeyGroupError(
            f"component {component!r}: {parallelism} tasks but only {groups} key groups "
            f"({KEY_GROUPS_KEY}); a stateful component can have at most {groups} tasks")
