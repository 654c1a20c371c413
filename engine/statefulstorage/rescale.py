"""Per-task state when a stateful component's parallelism changes.

Keyed state moves by key group (engine/statefulstorage/keyed.py); what a task keeps for
itself (the top level of its ``State``) has no key to follow, so the component says how
to share it out: its ``rescale_state(states, new_parallelism)``, or by default state
whose values are all lists is split (``compat.storm_api.state.split_lists``) and empty
state stays empty. Anything else cannot be shared out without the component's word: the
change is refused before it is made (``heron update``, the Health Manager: the newest
checkpoint records each component's shape, ``task_state_shape``), never at restore.

A class that says its state is keyed by its input (``rescale_state_by_key = True``:
heronpy's bolts, whose ``HashMapState`` is usually keyed by the word a fields grouping
sends them) on a component fed only by fields groupings has a fourth shape, KEYED,
when every key its task holds is one the grouping sends that task (the key's key group
is the task's); its entries then move like keyed state, each to its key's new owner.
State holding any other key (a per-task total, a position) is OTHER, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compat.storm_api.state import HashMapState, split_lists
from engine.common.grouping.key_groups import key_group, owner_index

EMPTY, LISTS, OTHER, KEYED = "empty", "lists", "other", "keyed"

#: the class attribute by which a component says its per-task state is keyed by input
BY_KEY_ATTRIBUTE = "rescale_state_by_key"


class RescaleRefused(ValueError):
    """Per-task state that cannot be shared out; the message names the component."""


def keyed_by_input(component_class: type | None, input_groupings: list[str]) -> bool:
    """Whether a component's per-task state may move by key: its class says its state is
    keyed by input and every subscription it has is a fields grouping."""
    return (bool(getattr(component_class, BY_KEY_ATTRIBUTE, False)) and bool(input_groupings)
            and all(g == "fields" for g in input_groupings))


def owned_by(index: int, parallelism: int, groups: int) -> Callable[[Any], bool]:
    """Whether a key is one task ``index`` of ``parallelism`` receives by fields grouping."""
    def owns(key: Any) -> bool:
        try:
            return owner_index(key_group(key, groups), groups, parallelism) == index
        except Exception:  # a key no grouping could hash is no grouping key
            return False
    return owns


def task_state_shape(state: Any, owns: Callable[[Any], bool] | None = None) -> str:
    """EMPTY (nothing, or only empty values), LISTS (every value a list), KEYED (with
    ``owns``, the task's key ownership: every key is one the task receives) or OTHER."""
    values = [v for v in state.values() if v not in (None, [], {}, (), "")]
    if not values:
        return EMPTY
    if owns is not None and all(owns(key) for key in state):
        return KEYED
    if all(isinstance(v, list) for v in state.values()):
        return LISTS
    return OTHER


def combine_shapes(shapes: list[str]) -> str:
    """A component's shape from its tasks' (the least shareable wins; lists split by
    position and entries moved by key do not mix)."""
    if OTHER in shapes or (LISTS in shapes and KEYED in shapes):
        return OTHER
    for shape in (LISTS, KEYED):
        if shape in shapes:
            return shape
    return EMPTY


def _by_key(component: str, states: list[Any], new_parallelism: int,
            groups: int) -> list[HashMapState]:
    out = [HashMapState() for _ in range(new_parallelism)]
    seen: set[Any] = set()
    for state in states:
        for key, value in state.items():
            if key in seen:
                raise RescaleRefused(f"component {component!r}: key {key!r} is in the state of "
                                     "two tasks, so its state is not keyed by its input")
            seen.add(key)
            out[owner_index(key_group(key, groups), groups, new_parallelism)][key] = value
    return out


def can_rescale(component_class: type | None, shape: str) -> bool:
    return getattr(component_class, "rescale_state", None) is not None or shape != OTHER


def rescale_task_states(component_class: type | None, component: str, states: list[Any],
                        new_parallelism: int, *, key_groups: int | None = None
                        ) -> list[HashMapState]:
    """The new tasks' per-task states, in task order, from the old tasks' (task order).
    ``key_groups``: given when the component's state may move by key
    (``keyed_by_input``); its entries then do when every old task held only keys it
    received (the shape its checkpoint recorded as KEYED), else the rules below apply."""
    if key_groups:
        old = len(states)
        shape = combine_shapes([task_state_shape(state, owned_by(i, old, key_groups))
                                for i, state in enumerate(states)])
        if shape == KEYED:
            return _by_key(component, states, new_parallelism, key_groups)
    hook = getattr(component_class, "rescale_state", None)
    if hook is not None:
        try:
            out = list(hook(list(states), new_parallelism))
        except Exception as exc:
            raise RescaleRefused(f"component {component!r}: rescale_state raised "
                                 f"{type(exc).__name__}: {exc}") from exc
        if len(out) != new_parallelism:
            raise RescaleRefused(f"component {component!r}: rescale_state returned {len(out)} "
                                 f"states for {new_parallelism} tasks")
        return [HashMapState(s) for s in out]
    shape = combine_shapes([task_state_shape(s) for s in states])
    if shape == EMPTY:
        return [HashMapState() for _ in range(new_parallelism)]
    try:
        return [HashMapState(s) for s in split_lists(states, new_parallelism)]
    except TypeError as exc:
        raise RescaleRefused(f"component {component!r} keeps per-task state that is not "
                             f"lists and defines no rescale_state: {exc}") from exc
