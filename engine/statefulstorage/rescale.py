"""Per-task state when a stateful component's parallelism changes.

Keyed state moves by key group (engine/statefulstorage/keyed.py); what a task keeps for
itself (the top level of its ``State``) has no key to follow, so the component says how
to share it out: its ``rescale_state(states, new_parallelism)``, or by default state
whose values are all lists is split (``compat.storm_api.state.split_lists``) and empty
state stays empty. Anything else cannot be shared out without the component's word: the
change is refused before it is made (``heron update``, the Health Manager: the newest
checkpoint records each component's shape, ``task_state_shape``), never at restore.
"""

from __future__ import annotations

from typing import Any

from compat.storm_api.state import HashMapState, split_lists

EMPTY, LISTS, OTHER = "empty", "lists", "other"


class RescaleRefused(ValueError):
    """Per-task state that cannot be shared out; the message names the component."""


def task_state_shape(state: Any) -> str:
    """EMPTY (nothing, or only empty values), LISTS (every value a list) or OTHER."""
    values = [v for v in state.values() if v not in (None, [], {}, (), "")]
    if not values:
        return EMPTY
    if all(isinstance(v, list) for v in state.values()):
        return LISTS
    return OTHER


def combine_shapes(shapes: list[str]) -> str:
    """A component's shape from its tasks' (the least shareable wins)."""
    for shape in (OTHER, LISTS):
        if shape in shapes:
            return shape
    return EMPTY


def can_rescale(component_class: Any, shape: str) -> bool:
    return getattr(component_class, "rescale_state", None) is not None or shape != OTHER


def rescale_task_states(component_class: Any, component: str, states: list[Any],
                        new_parallelism: int) -> list[HashMapState]:
    """The new tasks' per-task states, in task order, from the old tasks' (task order)."""
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
