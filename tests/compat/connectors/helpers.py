"""Simulate what an engine does with a stateful component's state, without an engine:
save it at a checkpoint (``pre_save``, then the bytes), and build a fresh component from
saved state after a failure, as a restore does."""

from __future__ import annotations

import json
from typing import Any

from compat.storm_api.state import HashMapState, State


def roundtrip(state: State) -> HashMapState:
    """``state`` after being stored and read back. JSON is stricter than the topology's
    serializers (str keys, no tuples), so what survives it survives them."""
    return HashMapState(json.loads(json.dumps(dict(state.items()))))


def checkpoint(component: Any, checkpoint_id: str) -> HashMapState:
    """What a checkpoint stores for ``component``: ``pre_save``, then its state's bytes."""
    component.pre_save(checkpoint_id)
    return roundtrip(component.state)


def with_state(component_cls: type, state: State) -> type:
    """``component_cls`` given ``state`` by ``init_state``, as a restore gives it (the
    harnesses host components with empty state)."""
    base_init_state = component_cls.init_state

    def init_state(self: Any, _empty: State) -> None:
        base_init_state(self, state)

    return type(component_cls.__name__, (component_cls,), {"init_state": init_state})
